//! PDF and Word files, on real files nobody here wrote (`scripts/fetch-documents.sh`: the R
//! manuals as Debian's r-doc-pdf ships them, Word files from docx2python's test resources, a
//! password-protected copy made with qpdf) and bad inputs made from them: known sentences are
//! extracted on their pages, outlines and Word heading styles become headings, a changed file
//! alone is extracted again, and each bad file is a warning naming it while the build goes on.

use std::path::{Path, PathBuf};

use crate::common::{c2s, repo, skip, stderr};

/// The fetched files, or None (skipped loudly; a failure under C2S_REQUIRE_ALL=1).
fn real_docs() -> Option<PathBuf> {
    let dir = repo().join("real-docs");
    let all = [
        "pdf/R-intro.pdf",
        "pdf/R-data.pdf",
        "pdf/encrypted.pdf",
        "pdf/fullrefman.pdf",
        "docx/zen_of_python.docx",
        "docx/240-DOP-1013A Lay Down Tubulars.docx",
    ];
    if all.iter().all(|f| dir.join(f).is_file()) {
        Some(dir)
    } else {
        skip("the real PDF and Word files are missing (run scripts/fetch-documents.sh)");
        None
    }
}

/// A PDF whose one page is an image and has no text: what a scanner makes.
fn scanned_pdf() -> Vec<u8> {
    let content = "q 612 0 0 792 0 0 cm /Im1 Do Q";
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 4 >>\nstream\n\u{0}\u{7f}\u{7f}\u{0}\nendstream".to_string(),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

/// `c2s build CORPUS --json` into `tmp/out` with a memo in `tmp`; the report.
fn build(tmp: &Path, corpus: &Path) -> serde_json::Value {
    let cache = format!("cache.path={}", tmp.join("memo.sqlite").display());
    let out = tmp.join("out");
    let args = [
        "build",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        &cache,
        "--json",
        "-q",
    ];
    let o = c2s(tmp, &args);
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--json prints the report")
}

/// The documents of the output: (id, source, title, text of its document file).
fn documents(out: &Path) -> Vec<(String, String, String, String)> {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("documents.json")).unwrap()).unwrap();
    index
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, d)| {
            let file = out.join(d["file"].as_str().unwrap());
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let field = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (id.clone(), field("source"), field("title"), text)
        })
        .collect()
}

/// The warnings of a report that name `file`.
fn warnings_of(report: &serde_json::Value, file: &str) -> Vec<String> {
    report["warning_list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["file"].as_str().unwrap_or_default().ends_with(file))
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn pdf_chapters_keep_their_pages_and_headings_and_bad_files_are_named() {
    let Some(real) = real_docs() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("library");
    std::fs::create_dir_all(corpus.join("manuals")).unwrap();
    std::fs::create_dir_all(corpus.join("forms")).unwrap();
    for f in ["R-intro.pdf", "R-data.pdf", "encrypted.pdf"] {
        std::fs::copy(real.join("pdf").join(f), corpus.join("manuals").join(f)).unwrap();
    }
    for f in ["zen_of_python.docx", "240-DOP-1013A Lay Down Tubulars.docx"] {
        std::fs::copy(real.join("docx").join(f), corpus.join("forms").join(f)).unwrap();
    }
    let data = std::fs::read(real.join("pdf/R-data.pdf")).unwrap();
    std::fs::write(
        corpus.join("manuals/truncated.pdf"),
        &data[..data.len() / 3],
    )
    .unwrap();
    std::fs::write(corpus.join("manuals/empty.pdf"), b"").unwrap();
    std::fs::write(corpus.join("manuals/scan.pdf"), scanned_pdf()).unwrap();
    std::fs::write(
        corpus.join("forms/notes.docx"),
        b"plain text saved as .docx",
    )
    .unwrap();

    let report = build(tmp.path(), &corpus);
    let docs = documents(&tmp.path().join("out"));

    // A known sentence of R-intro's first chapter, on page 8 (pdftotext agrees): the page the
    // chapter's document starts on, before its `[page 9]` mark.
    let sentence = "R is an integrated suite of software facilities for data manipulation";
    let (_, source, title, text) = docs
        .iter()
        .find(|d| d.3.contains(sentence))
        .unwrap_or_else(|| panic!("no document holds {sentence:?}"));
    assert_eq!(source, "manuals/R-intro.pdf#page=8", "{title}");
    assert_eq!(title, "1 Introduction and preliminaries");
    let next = text.find("[page 9]").expect("page 9 is marked");
    assert!(text.find(sentence).unwrap() < next, "on page 8");
    assert!(text.contains("\n[page 12]\n"), "each later page is marked");
    // The outline's entries below the chapter are headings where their pages begin.
    assert!(
        text.contains("\n## 1.1 The R environment\n"),
        "{}",
        &text[..2000.min(text.len())]
    );
    let chapters = docs
        .iter()
        .filter(|d| d.1.starts_with("manuals/R-intro.pdf"))
        .count();
    assert!(
        chapters >= 12,
        "one document per chapter of R-intro: {chapters}"
    );

    // Word: a heading style becomes a heading; a table keeps its cells as a table.
    let zen = docs
        .iter()
        .find(|d| d.1 == "forms/zen_of_python.docx")
        .expect("the Word file is a document");
    assert!(
        zen.3.contains("# Beautiful is better than ugly."),
        "{}",
        zen.3
    );
    assert!(zen.3.contains("Errors should never pass silently."));
    let form = docs
        .iter()
        .find(|d| d.1.ends_with("Lay Down Tubulars.docx"))
        .expect("the procedure is a document");
    assert!(form.3.contains("Rig Floor"), "{}", form.3);
    assert!(
        form.3
            .lines()
            .any(|l| l.starts_with('|') && l.contains("Hot Work")),
        "{}",
        form.3
    );

    // Each bad file: a warning naming it and why; the build went on.
    for (file, why) in [
        ("manuals/empty.pdf", "cannot be read as a PDF"),
        ("manuals/encrypted.pdf", "encrypted with a password"),
        ("manuals/scan.pdf", "has no text layer"),
        ("forms/notes.docx", "cannot be read as a Word file"),
    ] {
        let w = warnings_of(&report, file);
        assert!(w.iter().any(|m| m.contains(why)), "{file}: {w:?}");
        assert!(
            !docs.iter().any(|d| d.1.starts_with(file)),
            "{file} made no document"
        );
    }
    // A truncated file is read as far as it goes, and named.
    let truncated = warnings_of(&report, "manuals/truncated.pdf");
    assert!(
        truncated
            .iter()
            .any(|m| m.contains("is truncated or damaged")),
        "truncated.pdf: {truncated:?}"
    );
    // A Word file without a title property is titled by its name.
    assert_eq!(form.2, "240-DOP-1013A Lay Down Tubulars");
}

#[test]
fn a_changed_pdf_alone_is_extracted_again() {
    let Some(real) = real_docs() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("library");
    std::fs::create_dir_all(&corpus).unwrap();
    for f in ["R-intro.pdf", "R-data.pdf"] {
        std::fs::copy(real.join("pdf").join(f), corpus.join(f)).unwrap();
    }
    let first = build(tmp.path(), &corpus);
    assert_eq!(first["sources_read"], 2);
    // Same bytes, new stat (a checkout), in a build that runs (a page was added): the PDF is
    // not extracted again, its bytes are known; only the new page is read.
    std::fs::copy(real.join("pdf/R-intro.pdf"), corpus.join("R-intro.pdf")).unwrap();
    std::fs::write(
        corpus.join("notes.md"),
        "# Notes\n\nWhere the manuals are kept.\n",
    )
    .unwrap();
    let touched = build(tmp.path(), &corpus);
    assert_eq!(touched["sources_read"], 1, "{touched}");
    // Other bytes: only that file.
    std::fs::copy(real.join("pdf/encrypted.pdf"), corpus.join("R-data.pdf")).unwrap();
    let changed = build(tmp.path(), &corpus);
    assert_eq!(changed["sources_read"], 1, "{changed}");
    assert!(warnings_of(&changed, "R-data.pdf")[0].contains("encrypted"));
}

#[test]
fn a_2415_page_pdf_is_read_in_bounded_memory() {
    let Some(real) = real_docs() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("ref");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::copy(
        real.join("pdf/fullrefman.pdf"),
        corpus.join("fullrefman.pdf"),
    )
    .unwrap();
    // The build's own peak memory: its resource usage, as `wait4` reports it for this child
    // alone (other tests' children run at the same time).
    let cache = format!("cache.path={}", tmp.path().join("memo.sqlite").display());
    let out = tmp.path().join("out");
    // Reaped below by `wait4`, which `Child::wait` cannot give the usage of.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_c2s"))
        .args([
            "build",
            corpus.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--set", &cache, "-q"])
        .current_dir(tmp.path())
        .spawn()
        .expect("run c2s");
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the build failed"
    );
    let docs = documents(&out).len();
    assert!(
        docs >= 10,
        "one document per part of the reference manual: {docs}"
    );
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(
        peak_mib < 1536,
        "peak RSS {peak_mib} MiB for a 6.5 MB, 2,415-page PDF"
    );
}
