//! The rules that find a planted instruction in one sentence, by what it does (overrides
//! instructions, addresses a model, fakes a system message, asks for a secret or money,
//! weakens security), in the languages docs are most often written and translated in.

/// `(rule, pattern)`, matched case-insensitively against one sentence.
pub(super) const RULES: &[(&str, &str)] = &[
    (
        "overrides instructions",
        r"\b(ignore|disregard|forget)\b[^.!?]{0,30}\b(previous|prior|preceding|above|earlier|original|initial|system|your|these)\b[^.!?]{0,20}\b(instructions?|prompts?|rules|directions|guidelines|directives)\b",
    ),
    (
        "addresses an AI model",
        r"\b(instructions?|message|note|notice|attention|warning|reminder)\b[^.!?]{0,15}\b(to|for)\s+(any|all|every|each|the|an?)?\s*(ai|a\.i\.|llms?|language models?|ai models?|ai assistants?|assistants?|chatbots?|summari[sz]ers?|gpts?|copilots?)\b",
    ),
    (
        "addresses an AI model",
        r"\b(ai|llms?|language models?|ai models?|assistants?|chatbots?|summari[sz]ers?|gpts?)\b[^.!?]{0,30}\b(reading|processing|summari[sz]ing|parsing|indexing|seeing|crawling)\s+(this|these)\b",
    ),
    (
        "addresses an AI model",
        r"\b(dear|hey|hello|note to)\s+(ai|llm|assistant|chatbot|claude|gpt|chatgpt|copilot|gemini|summari[sz]er)\b",
    ),
    (
        "addresses an AI model",
        r"\bas an? (ai|artificial intelligence|language model|llm|ai assistant|ai model)( (model|assistant|language model|system))?(\s*[,:;.!?]|\s+(you|i|it)\b)",
    ),
    (
        "asks for text in every output",
        r"\b(every|each|all|any)\s+(summar(y|ies)|descriptions?|labels?|responses?|repl(y|ies)|outputs?|answers?)\s+(that\s+)?you\s+(write|produce|generate|create|give|return)\b",
    ),
    (
        "asks for text in every output",
        r"\binclude\s+(this|the following)\s+(exact\s+)?(sentence|text|line|phrase|statement|message|link)\b",
    ),
    (
        "fakes a system message",
        r"(^|[\[<(#*|>]\s*|[^\w\s]\s+|\b(important|urgent|new|hidden|secret|priority|critical|official|internal)\s+)(system|developer)\s*(prompt|override|instructions?|note)\s*[:\]>)]",
    ),
    (
        "fakes a system message",
        r"</?\s*system\s*>|\[\s*system\s*\]|\bnew instructions\s*:|\b(you are|you're)\s+(now\s+)?(in\s+)?developer mode\b|\bdeveloper mode\s+(is\s+)?(now\s+)?(enabled|activated|on)\b[^.!?]{0,40}\b(you|assistant|ai|model)\b|\bjailbreak(ed)?\s+(mode|prompt)\b|\b(you are|you're)\s+(now\s+)?jailbroken\b",
    ),
    (
        "hides from the user",
        r"\b(do not|don't|never)\s+(tell|inform|reveal\s+to|mention\s+to|show)\s+the\s+user\b|\bwithout\s+(telling|informing)\s+the\s+user\b|\breveal\s+(your|the)\s+(system\s+prompt|instructions|prompt)\b",
    ),
    (
        "overrides instructions",
        r"\b(ignorier\w*|vergiss|vergessen sie|missacht\w*)\b[^.!?]{0,40}\b(vorherigen|bisherigen|obigen|vorigen|früheren|deine|ihre|system)\s+(anweisungen|instruktionen|vorgaben|befehle)\b",
    ),
    (
        "overrides instructions",
        r"\b(vorherigen|bisherigen|obigen|vorigen|früheren)\s+(anweisungen|instruktionen|vorgaben|befehle)\b[^.!?]{0,20}\b(ignorier\w*|vergess\w*|missacht\w*)",
    ),
    (
        "overrides instructions",
        r"\b(ignore[zr]?|oublie[zr]?)\b[^.!?]{0,40}\b(instructions|consignes)\s+(précédentes|antérieures|ci-dessus)",
    ),
    (
        "overrides instructions",
        r"\b(ignora[r]?|olvida[r]?|ignore)\b[^.!?]{0,40}\b(instrucciones|istruzioni|instruções|indicaciones)\s+(anteriores|previas|precedenti|anteriori)\b",
    ),
    (
        "overrides instructions",
        r"\b(negeer|vergeet)\b[^.!?]{0,40}\b(vorige|eerdere)\s+(instructies|opdrachten)\b",
    ),
    (
        "asks to send a secret",
        r"\b(email|e-mail|send|share|forward|give|provide|submit|post|text|reply with)\b[^.!?]{0,40}\b(passwords?|passcodes?|pins?|credentials|api keys?|secret keys?|private keys?|access tokens?|recovery codes?|backup codes?|verification codes?|one-time codes?|2fa codes?|otp|credit card( numbers?)?|card numbers?|cvv|social security( numbers?)?|ssn|seed phrases?|login details)\b[^.!?]{0,60}(@|https?://|\bto\s+(us|this|the following|our|verify|support|security|admin))",
    ),
    (
        "asks to send money",
        r"\b(wire|transfer|send|deposit|pay)\b[^.!?]{0,40}\b(account|acct|iban|wallet|routing)(\s+(number|no\.?))?\s*[:#]?\s*[a-z]{0,4}\d{5,}",
    ),
    (
        "weakens security",
        r"\b(recommend\w*|all users (must|should)|everyone (must|should)|you must|users must)\b[^.!?]{0,30}\b(disabl(e|ing)|turn(ing)?\s+off|switch(ing)?\s+off|remov(e|ing)|deactivat(e|ing))\b[^.!?]{0,30}\b(two-factor|2fa|mfa|multi-factor|antivirus|firewall|encryption|password protection)\b",
    ),
    (
        "addresses an AI model",
        r"\b(assistant|ai assistant|ai model|llm|chatbot)\s*:\s*(please\s+)?(ignore|disregard|forget|tell|say|write|reply|respond|answer|always|never|do not|don't|include|recommend|pretend)\b",
    ),
    (
        "overrides instructions",
        r"\b(ignore|disregard|forget)\s+(everything|the (page|text|content|document|article))\s+(above|before|so far)\b",
    ),
    // The languages docs are most often translated into: the same five kinds of plant,
    // each needing an instruction (a verb with its object), never a single word.
];

/// The rules of the other European languages (German, French, Spanish, Portuguese, Italian):
/// read only in a text with words of those languages (see [`european`]).
pub(super) const EUROPEAN_RULES: &[(&str, &str)] = &[
    // German.
    (
        "addresses an AI model",
        r"\bals\s+(ki|künstliche intelligenz|sprachmodell|ki-modell|ki-assistent)\b[^.!?]{0,40}\b(musst|sollst|darfst|müssen sie|sollen sie)\b",
    ),
    (
        "addresses an AI model",
        r"\b(anweisung|hinweis|nachricht|befehl)[^\s.,;:!?]*\s+(an|für)\s+(die\s+|alle\s+|jede\s+)?(ki|sprachmodelle?|ki-modelle?|ki-assistenten?|chatbots?)\b",
    ),
    (
        "fakes a system message",
        r"\bsystem(anweisung|nachricht|hinweis|prompt)[^\s.,;:!?]*\s*:",
    ),
    (
        "asks to send a secret",
        r"\b(passw(o|ö)rt[^\s.,;:!?]*|kennw(o|ö)rt[^\s.,;:!?]*|zugangsdaten|wiederherstellungscodes?|backup-codes?|kreditkart[^\s.,;:!?]*|api-schlüssel[^\s.,;:!?]*)\b[^.!?]{0,60}(@|https?://)[^.!?]{0,40}\b(send[^\s.,;:!?]*|schick[^\s.,;:!?]*|übermittel[^\s.,;:!?]*|mail[^\s.,;:!?]*)\b",
    ),
    (
        "asks to send a secret",
        r"\b(send[^\s.,;:!?]*|schick[^\s.,;:!?]*|übermittel[^\s.,;:!?]*)\b[^.!?]{0,40}\b(passw(o|ö)rt[^\s.,;:!?]*|kennw(o|ö)rt[^\s.,;:!?]*|zugangsdaten|wiederherstellungscodes?|kreditkart[^\s.,;:!?]*)\b[^.!?]{0,60}(@|https?://)",
    ),
    (
        "asks to send money",
        r"\b(überweis[^\s.,;:!?]*|zahl[^\s.,;:!?]*|send[^\s.,;:!?]*)\b[^.!?]{0,40}\b(konto|iban|wallet)[^\s.,;:!?]*\b[^.!?\d]{0,15}\d{5,}",
    ),
    (
        "weakens security",
        r"\b(empfehlen|sollten|müssen|alle benutzer|alle nutzer)\b[^.!?]{0,40}\b(zwei-faktor[^\s.,;:!?]*|2fa|mfa|firewall|virenschutz|antivirus|verschlüsselung)\b[^.!?]{0,30}\b(deaktivier[^\s.,;:!?]*|abschalt[^\s.,;:!?]*|ausschalt[^\s.,;:!?]*|entfern[^\s.,;:!?]*)",
    ),
    // French.
    (
        "overrides instructions",
        r"\bne\s+tenez\s+(pas|plus)\s+compte\s+des\s+(instructions|consignes)\b",
    ),
    (
        "addresses an AI model",
        r"\ben tant qu['’]\s*(ia|intelligence artificielle|modèle de langage|assistant)\b[^.!?]{0,40}\b(tu dois|vous devez|dois|devez)\b",
    ),
    (
        "addresses an AI model",
        r"\b(instructions?|note|message|avis)\s+(à|pour)\s+(l['’]\s*|les\s+|toute\s+|tout\s+)?(ia|intelligences? artificielles?|modèles? de langage|assistants? ia|llm)\b",
    ),
    (
        "fakes a system message",
        r"\b(message|invite|instructions?|note)\s+(du\s+)?système\s*:",
    ),
    (
        "asks to send a secret",
        r"\b(envoy[^\s.,;:!?]*|transmet[^\s.,;:!?]*|partag[^\s.,;:!?]*|communiqu[^\s.,;:!?]*|fourni[^\s.,;:!?]*)\b[^.!?]{0,40}\b(mots? de passe|identifiants|codes? de (secours|récupération|vérification)|numéro de carte|carte (bancaire|de crédit)|clés? api|code pin)\b[^.!?]{0,60}(@|https?://)",
    ),
    (
        "asks to send money",
        r"\b(vir[^\s.,;:!?]*|transf[ée]r[^\s.,;:!?]*|vers[^\s.,;:!?]*|pay[^\s.,;:!?]*)\b[^.!?]{0,40}\b(compte|iban|portefeuille)\b[^.!?\d]{0,15}\d{5,}",
    ),
    (
        "weakens security",
        r"\b(recommandons|vous devez|tous les utilisateurs doivent|il faut)\b[^.!?]{0,30}\b(désactiv[^\s.,;:!?]*|supprim[^\s.,;:!?]*)\b[^.!?]{0,30}\b(double authentification|authentification à deux facteurs|2fa|mfa|pare-feu|antivirus|chiffrement)\b",
    ),
    // Spanish.
    (
        "overrides instructions",
        r"\b(omite|omitan|haz caso omiso de)\b[^.!?]{0,40}\b(instrucciones|indicaciones)\s+(anteriores|previas)\b",
    ),
    (
        "addresses an AI model",
        r"\bcomo\s+(una?\s+)?(ia|inteligencia artificial|modelo de lenguaje|asistente de ia)\s*,?\s+(debes|tienes que|deberás|debe)\b",
    ),
    (
        "addresses an AI model",
        r"\b(instrucci[oó]n(es)?|nota|mensaje|aviso)\s+para\s+(la\s+|las\s+|el\s+|los\s+|cualquier\s+|toda\s+)?(ia|inteligencias? artificiales?|modelos? de lenguaje|asistentes? de ia|llm)\b",
    ),
    (
        "fakes a system message",
        r"\b(mensaje|instrucci[oó]n(es)?|nota|indicaci[oó]n)\s+del\s+sistema\s*:",
    ),
    (
        "asks to send a secret",
        r"\b(env[ií][^\s.,;:!?]*|mand[^\s.,;:!?]*|compart[^\s.,;:!?]*|proporcion[^\s.,;:!?]*|facilit[^\s.,;:!?]*)\b[^.!?]{0,40}\b(contraseñas?|credenciales|c[oó]digos? de (respaldo|recuperaci[oó]n|verificaci[oó]n)|n[uú]mero de (la )?tarjeta|tarjeta de cr[eé]dito)\b[^.!?]{0,60}(@|https?://)",
    ),
    (
        "asks to send money",
        r"\b(transfier[^\s.,;:!?]*|transferi[^\s.,;:!?]*|deposit[^\s.,;:!?]*|pag[^\s.,;:!?]*)\b[^.!?]{0,40}\b(cuenta|iban|billetera|monedero)\b[^.!?\d]{0,15}\d{5,}",
    ),
    (
        "weakens security",
        r"\b(recomendamos|debes|deben|todos los usuarios deben)\b[^.!?]{0,30}\b(desactiv[^\s.,;:!?]*|deshabilit[^\s.,;:!?]*|quit[^\s.,;:!?]*|elimin[^\s.,;:!?]*)\b[^.!?]{0,30}\b(autenticaci[oó]n (de dos factores|en dos pasos)|2fa|mfa|cortafuegos|firewall|antivirus|cifrado)\b",
    ),
    // Portuguese.
    (
        "overrides instructions",
        r"\b(esque[cç]a|desconsidere|ignore|ignora)\b[^.!?]{0,40}\b(instru[cç][oõ]es|orienta[cç][oõ]es|regras)\s+(anteriores|acima|pr[eé]vias)\b",
    ),
    (
        "addresses an AI model",
        r"\bcomo\s+(uma?\s+)?(ia|intelig[eê]ncia artificial|modelo de linguagem|assistente de ia)\s*,?\s+(voc[eê]\s+)?(deve|precisa|tem que)\b",
    ),
    (
        "addresses an AI model",
        r"\b(instru[cç][aã]o|instru[cç][oõ]es|nota|mensagem|aviso)\s+para\s+(a\s+|as\s+|o\s+|os\s+|qualquer\s+)?(ia|intelig[eê]ncias? artificiais?|modelos? de linguagem|assistentes? de ia|llm)\b",
    ),
    (
        "fakes a system message",
        r"\b(mensagem|instru[cç][oõ]es|nota)\s+do\s+sistema\s*:",
    ),
    (
        "asks to send a secret",
        r"\b(envi[^\s.,;:!?]*|mand[^\s.,;:!?]*|compartilh[^\s.,;:!?]*|forne[cç][^\s.,;:!?]*|informe)\b[^.!?]{0,40}\b(senhas?|credenciais|c[oó]digos? de (backup|recupera[cç][aã]o|verifica[cç][aã]o)|n[uú]mero do cart[aã]o|cart[aã]o de cr[eé]dito)\b[^.!?]{0,60}(@|https?://)",
    ),
    (
        "asks to send money",
        r"\b(transfir[^\s.,;:!?]*|transfer[^\s.,;:!?]*|deposit[^\s.,;:!?]*|pag[^\s.,;:!?]*)\b[^.!?]{0,40}\b(conta|iban|carteira)\b[^.!?\d]{0,15}\d{5,}",
    ),
    (
        "weakens security",
        r"\b(recomendamos|voc[eê] deve|todos os usu[aá]rios devem|devem)\b[^.!?]{0,30}\b(desativ[^\s.,;:!?]*|desabilit[^\s.,;:!?]*|remov[^\s.,;:!?]*)\b[^.!?]{0,30}\b(autentica[cç][aã]o de dois fatores|verifica[cç][aã]o em duas etapas|2fa|mfa|firewall|antiv[ií]rus|criptografia)\b",
    ),
    // Italian.
    (
        "overrides instructions",
        r"\b(dimentica|trascura|non considerare)\b[^.!?]{0,40}\b(istruzioni|indicazioni|regole)\s+(precedenti|sopra|anteriori|di sistema)\b",
    ),
    (
        "addresses an AI model",
        r"\bcome\s+(un['’]?\s*|una\s+)?(ia|intelligenza artificiale|modello linguistico|assistente ia)\s*,?\s+(devi|dovete|deve)\b",
    ),
    (
        "addresses an AI model",
        r"\b(istruzion[ei]|nota|messaggio|avviso)\s+per\s+(l['’]\s*|gli\s+|i\s+|ogni\s+|qualsiasi\s+)?(ia|intelligenz[ae] artificial[ei]|modell[oi] linguistic[oi]|assistent[ei] ia|llm)\b",
    ),
    (
        "fakes a system message",
        r"\b(messaggio|istruzioni|nota)\s+di\s+sistema\s*:",
    ),
    (
        "asks to send a secret",
        r"\b(invi[^\s.,;:!?]*|mand[^\s.,;:!?]*|condivid[^\s.,;:!?]*|fornisc[^\s.,;:!?]*|comunic[^\s.,;:!?]*)\b[^.!?]{0,40}\b(password|credenziali|codici? di (backup|recupero|verifica)|numero della carta|carta di credito)\b[^.!?]{0,60}(@|https?://)",
    ),
    (
        "asks to send money",
        r"\b(bonific[^\s.,;:!?]*|trasferi[^\s.,;:!?]*|vers[^\s.,;:!?]*|pag[^\s.,;:!?]*)\b[^.!?]{0,40}\b(conto|iban|portafoglio)\b[^.!?\d]{0,15}\d{5,}",
    ),
    (
        "weakens security",
        r"\b(consigliamo|raccomandiamo|devi|dovete|tutti gli utenti devono)\b[^.!?]{0,30}\b(disattiv[^\s.,;:!?]*|disabilit[^\s.,;:!?]*|rimuov[^\s.,;:!?]*)\b[^.!?]{0,30}\b(autenticazione a due fattori|verifica in due passaggi|2fa|mfa|firewall|antivirus|crittografia)\b",
    ),
];

/// Common words of German, French, Spanish, Portuguese and Italian (articles, pronouns,
/// conjunctions: an instruction in those languages has some), lowercase as they stand inside a
/// sentence: the gate of [`EUROPEAN_RULES`], so that most English texts do not pay for them.
/// It is read in the same pass as the always-read rules.
pub(super) const EUROPEAN_GATE: &str = r"\b(und|der|das|nicht|sie|du|alle|dein|deine|ist|mit|für|les|des|est|une|pour|vous|tu|le|la|et|que|qui|pas|los|las|una|para|por|usted|el|tus|sus|todos|não|uma|você|com|os|seu|sua|il|del|di|non|che|gli|sono|della|per|tutti)\b";

/// The rules of languages in other scripts (Russian, Chinese, Japanese, Korean): read only in
/// a text that holds letters of those scripts, so that other texts pay nothing for them.
pub(super) const OTHER_SCRIPT_RULES: &[(&str, &str)] = &[
    // Russian.
    (
        "overrides instructions",
        r"\b(игнорир[^\s.,;:!?]*|проигнориру[^\s.,;:!?]*|забудь[^\s.,;:!?]*|не обращай[^\s.,;:!?]* внимани[^\s.,;:!?]* на)\b[^.!?]{0,30}\b(предыдущ[^\s.,;:!?]*|прежн[^\s.,;:!?]*|все|всё|вышеуказанн[^\s.,;:!?]*|системн[^\s.,;:!?]*|сво[^\s.,;:!?]*|ваш[^\s.,;:!?]*|эти)\b[^.!?]{0,20}\b(инструкци[^\s.,;:!?]*|указани[^\s.,;:!?]*|правил[^\s.,;:!?]*|команд[^\s.,;:!?]*)",
    ),
    (
        "addresses an AI model",
        r"\bкак\s+(ии|искусственный интеллект|языковая модель|ии-ассистент)\b[^.!?]{0,30}\b(ты должен|вы должны|должен|должна|обязан[^\s.,;:!?]*)\b",
    ),
    (
        "addresses an AI model",
        r"\b(инструкци[^\s.,;:!?]*|указани[^\s.,;:!?]*|сообщени[^\s.,;:!?]*|примечани[^\s.,;:!?]*)\s+для\s+(любой\s+|всех\s+|каждой\s+)?(ии|языков[^\s.,;:!?]* модел[^\s.,;:!?]*|нейросет[^\s.,;:!?]*|ии-ассистент[^\s.,;:!?]*|чат-бот[^\s.,;:!?]*|llm)\b",
    ),
    (
        "fakes a system message",
        r"\bсистемн[^\s.,;:!?]+\s+(промпт|сообщени[^\s.,;:!?]*|инструкци[^\s.,;:!?]*|указани[^\s.,;:!?]*)\s*:",
    ),
    (
        "asks to send a secret",
        r"\b(отправ[^\s.,;:!?]*|пришли[^\s.,;:!?]*|перешли[^\s.,;:!?]*|сообщи[^\s.,;:!?]*|переда[^\s.,;:!?]*)\b[^.!?]{0,40}\b(парол[^\s.,;:!?]*|уч[её]тн[^\s.,;:!?]+ данн[^\s.,;:!?]+|код[^\s.,;:!?]* (восстановления|подтверждения|доступа)|номер[^\s.,;:!?]* карт[^\s.,;:!?]*|кредитн[^\s.,;:!?]+ карт[^\s.,;:!?]*|пин-код[^\s.,;:!?]*)\b[^.!?]{0,60}(@|https?://)",
    ),
    (
        "asks to send money",
        r"\b(переведи[^\s.,;:!?]*|перевед[^\s.,;:!?]*|перечисл[^\s.,;:!?]*|оплат[^\s.,;:!?]*)\b[^.!?]{0,40}\b(сч[её]т[^\s.,;:!?]*|iban|кошел[её]к[^\s.,;:!?]*)\b[^.!?\d]{0,15}\d{5,}",
    ),
    (
        "weakens security",
        r"\b(рекоменду[^\s.,;:!?]*|должны|необходимо)\b[^.!?]{0,30}\b(отключ[^\s.,;:!?]*|выключ[^\s.,;:!?]*|удал[^\s.,;:!?]*)\b[^.!?]{0,30}\b(двухфакторн[^\s.,;:!?]*|2fa|mfa|брандмауэр[^\s.,;:!?]*|файрвол[^\s.,;:!?]*|антивирус[^\s.,;:!?]*|шифровани[^\s.,;:!?]*)",
    ),
    // Chinese (no word breaks: the pieces are whole terms).
    (
        "overrides instructions",
        r"(忽略|忽视|忽視|无视|無視|不要理会|不要理會|忘记|忘記|忘掉)[^。!?]{0,10}(之前|以前|先前|前面|上面|上述|原有|系统|系統)[^。!?]{0,6}(指令|指示|说明|說明|提示|规则|規則|命令)",
    ),
    (
        "addresses an AI model",
        r"作为(一个|一名)?\s*(ai|人工智能|语言模型|語言模型|ai\s*助手|大模型)[^。!?]{0,10}(你必须|你應該|你应该|你需要|必须|必須)",
    ),
    (
        "addresses an AI model",
        r"(给|給|致|写给|寫給)(所有|任何)?\s*(ai|人工智能|语言模型|語言模型|大模型|ai\s*助手)\s*的(指令|指示|说明|說明|提示|消息|訊息)",
    ),
    (
        "fakes a system message",
        r"(系统|系統)(提示|指令|消息|訊息|通知)\s*[:：]",
    ),
    (
        "asks to send a secret",
        r"(密码|密碼|口令|验证码|驗證碼|恢复码|恢復碼|备用码|備用碼|信用卡|银行卡|銀行卡|卡号|卡號)[^。!?]{0,20}(发送|發送|发给|發給|发到|發到|寄给|寄給|提交|告诉|告訴)[^。!?]{0,40}(@|https?://)",
    ),
    (
        "asks to send a secret",
        r"(发送|發送|发给|發給|提供|提交)[^。!?]{0,20}(密码|密碼|口令|验证码|驗證碼|恢复码|信用卡|卡号|卡號)[^。!?]{0,40}(@|https?://)",
    ),
    (
        "asks to send money",
        r"(汇款|匯款|转账|轉帳|打款|支付)[^。!?]{0,20}(账户|賬戶|帐户|帳戶|账号|帳號|卡号|卡號)[^。!?\d]{0,10}\d{5,}",
    ),
    (
        "weakens security",
        r"(建议|建議|必须|必須|应该|應該|所有用户|所有用戶)[^。!?]{0,15}(关闭|關閉|禁用|停用|移除)[^。!?]{0,15}(双重认证|雙重認證|两步验证|兩步驗證|双因素|雙因素|2fa|mfa|防火墙|防火牆|杀毒|殺毒|加密)",
    ),
    // Japanese.
    (
        "overrides instructions",
        r"(以前|前|これまで|上記|上|すべて|全て|システム)の(指示|命令|指令|プロンプト|ルール)[^。!?]{0,6}(無視|忘れ)",
    ),
    (
        "addresses an AI model",
        r"(ai|人工知能|言語モデル|aiアシスタント)として[^。!?]{0,20}(しなければなりません|する必要があります|しなさい|せよ)",
    ),
    (
        "addresses an AI model",
        r"(ai|人工知能|言語モデル|aiアシスタント|aiモデル)(へ|に)の(指示|メッセージ|注意|お知らせ)",
    ),
    (
        "fakes a system message",
        r"システム(プロンプト|メッセージ|指示|通知)\s*[:：]",
    ),
    (
        "asks to send a secret",
        r"(パスワード|暗証番号|認証コード|リカバリーコード|バックアップコード|クレジットカード|カード番号)[^。!?]{0,40}(@|https?://)[^。!?]{0,30}(送信|送って|送れ|メールして|提出)",
    ),
    (
        "asks to send a secret",
        r"(@|https?://)[^。!?]{0,40}(に|へ)[^。!?]{0,20}(パスワード|暗証番号|認証コード|リカバリーコード|クレジットカード|カード番号)[^。!?]{0,20}(送信|送って|送れ|メールして|提出)",
    ),
    (
        "asks to send money",
        r"(振り込|振込|送金)[^。!?]{0,20}(口座)[^。!?\d]{0,10}\d{5,}|(口座)[^。!?\d]{0,10}\d{5,}[^。!?]{0,20}(振り込|振込|送金)",
    ),
    (
        "weakens security",
        r"(二要素認証|2段階認証|二段階認証|2fa|mfa|ファイアウォール|ウイルス対策|暗号化)を?(無効|オフ|停止)に?(してください|することをお勧めします|することを推奨|しなければなりません|する必要があります)",
    ),
    // Korean.
    (
        "overrides instructions",
        r"(이전|앞의|위의|기존|모든|시스템)\s*(지시|명령|지침|프롬프트|규칙)(사항)?(을|를|은|는)?\s*(모두\s*)?(무시|잊어)",
    ),
    (
        "addresses an AI model",
        r"(ai|인공지능|언어\s*모델|ai\s*어시스턴트|ai\s*모델)(로서|으로서)[^.!?]{0,20}(해야|하십시오|하세요|하라)",
    ),
    (
        "addresses an AI model",
        r"(ai|인공지능|언어\s*모델|ai\s*어시스턴트)(에게|를\s*위한)\s*(지시|메시지|안내|주의)",
    ),
    (
        "fakes a system message",
        r"시스템\s*(프롬프트|메시지|지시|알림)\s*[:：]",
    ),
    (
        "asks to send a secret",
        r"(비밀번호|암호|인증\s*코드|복구\s*코드|백업\s*코드|신용카드|카드\s*번호)[^.!?]{0,40}(@|https?://)[^.!?]{0,30}(보내|전송|제출|알려)",
    ),
    (
        "asks to send a secret",
        r"(@|https?://)\S*\s*(로|으로|에게|에)[^.!?]{0,20}(비밀번호|암호|인증\s*코드|복구\s*코드|신용카드|카드\s*번호)[^.!?]{0,20}(보내|전송|제출|알려)",
    ),
    (
        "asks to send money",
        r"(송금|이체|입금)[^.!?]{0,20}(계좌)[^.!?\d]{0,10}\d{5,}|(계좌)[^.!?\d]{0,10}\d{5,}[^.!?]{0,20}(송금|이체|입금)",
    ),
    (
        "weakens security",
        r"(2단계\s*인증|이중\s*인증|2fa|mfa|방화벽|백신|암호화)(을|를)?\s*(비활성화|끄|해제)[^.!?]{0,10}(하십시오|하세요|해야|권장)",
    ),
];

/// Whether `text` holds Cyrillic, CJK or Hangul letters (the scripts of [`OTHER_SCRIPT_RULES`]).
pub(super) fn other_script(text: &str) -> bool {
    !text.is_ascii()
        && text.chars().any(|c| {
            matches!(c, '\u{0400}'..='\u{04FF}' | '\u{1100}'..='\u{11FF}' | '\u{3040}'..='\u{30FF}' | '\u{3130}'..='\u{318F}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}')
        })
}

/// A sentence that negates what it says ("never share your password") is documentation.
pub(super) const NEGATION: &str = concat!(
    r"\b(never|do not|don't|must not|mustn't|should not|shouldn't|will never|won't|cannot|can't|no one|nobody)\b",
    r"|\b(nie|niemals|nicht|keinesfalls|jamais|nunca|jam[aá]s|mai|никогда)\b",
    r"|\b(ne|n['’])\s*[^\s.,;:!?]+\s+(pas|jamais)\b|\bno\s+(env[ií]\w*|compart\w*|desactiv\w*|transfier\w*)",
    r"|\bn[aã]o\s+(envi\w*|compartilh\w*|desativ\w*)|\bnon\s+(invi\w*|condivid\w*|disattiv\w*)",
    r"|\bне\s+(отправ\w*|сообща\w*|переда\w*|отключа\w*|перевод\w*)",
    r"|不要|切勿|绝不|絕不|请勿|請勿|決して|しないで|절대|마십시오|마세요",
);

/// An override that the writer says of themselves ("I will ignore your instruction": babel's
/// error message, in the source listings its manual prints) reports what a program does; it
/// commands no reader. Measured on Debian's texlive-latex-base-doc: the three manuals that
/// print babel's source (babel.pdf, docstrip.pdf, l3doc.pdf) held every one of the 72 false
/// alarms of the 276 PDFs.
pub(super) const REPORTED_OVERRIDE: &str = r"\b(i|we)(\s+(will|shall|would|can|cannot|must|may|am going to|are going to)|['’]ll)?\s+(ignore|disregard|forget)\b";
