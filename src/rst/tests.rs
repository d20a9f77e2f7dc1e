use super::*;

fn md(text: &str) -> String {
    to_markdown(text).markdown
}

#[test]
fn section_titles_become_headings_by_style_order() {
    let page = to_markdown(
        ".. _quickstart:\n\n==========\nQuickstart\n==========\n\nIntro.\n\nMake a Request\n--------------\n\nText.\n\nDeeper\n~~~~~~\n\nBack up\n-------\n",
    );
    assert_eq!(page.title.as_deref(), Some("Quickstart"));
    let m = page.markdown;
    assert!(m.contains("# Quickstart\n"), "{m}");
    assert!(m.contains("## Make a Request\n"), "{m}");
    assert!(m.contains("### Deeper\n"), "{m}");
    assert!(m.contains("## Back up"), "{m}");
    assert!(!m.contains("====") && !m.contains("----"), "{m}");
}

#[test]
fn literal_blocks_and_code_directives_become_fences() {
    let m = md(
        "Begin by importing the module::\n\n    >>> import requests\n\nExpanded form:\n\n::\n\n    plain\n\n.. code-block:: python\n   :caption: app.py\n   :linenos:\n\n   def f():\n       return 1\n\nAfter.\n",
    );
    assert!(
        m.contains("Begin by importing the module:\n```pycon\n>>> import requests\n```"),
        "{m}"
    );
    assert!(m.contains("```\nplain\n```"), "{m}");
    assert!(
        m.contains("**app.py**\n\n```python\ndef f():\n    return 1\n```"),
        "{m}"
    );
    assert!(m.ends_with("After."), "{m}");
}

#[test]
fn roles_and_references_read_as_the_site_shows_them() {
    let m = md(
        "A :class:`Response <requests.Response>` object called ``r``, see :func:`~requests.api.get`,\n:ref:`installed <install>`, :ref:`advanced-usage`, :doc:`the guide <user/advanced>`,\n`Python <https://python.org>`_, `PyPI`_, :pep:`8`, |project| |version|, a `default role`.\n\n.. _PyPI: https://pypi.org/\n.. |project| replace:: Requests\n",
    );
    assert!(m.contains("A `Response` object called `r`"), "{m}");
    assert!(m.contains("see `get`"), "{m}");
    assert!(
        m.contains("[installed](install), [](advanced-usage), [the guide](user/advanced),"),
        "{m}"
    );
    assert!(m.contains("[the guide](user/advanced)"), "{m}");
    assert!(m.contains("[Python](https://python.org)"), "{m}");
    assert!(m.contains("[PyPI](https://pypi.org/)"), "{m}");
    assert!(
        m.contains("PEP 8, Requests |version|, a `default role`."),
        "{m}"
    );
    assert!(!m.contains(".. _PyPI"), "{m}");
}

#[test]
fn admonitions_and_version_notes_are_titled_quotes() {
    let m = md(
        ".. note:: Keep it short.\n   Two lines.\n\n.. admonition:: Custom title\n\n   Body text.\n\n.. versionadded:: 2.1\n   The ``json`` parameter.\n",
    );
    assert!(
        m.contains("> **Note**\n>\n> Keep it short.\n> Two lines."),
        "{m}"
    );
    assert!(m.contains("> **Custom title**\n>\n> Body text."), "{m}");
    assert!(
        m.contains("> **Added in version 2.1**\n>\n> The `json` parameter."),
        "{m}"
    );
}

#[test]
fn lists_fields_and_definitions() {
    let m = md(
        "* one\n* two\n  continued\n\n  - nested\n\n#. first\n#. second\n\nterm\n   Its definition.\n\n:param url: The URL.\n",
    );
    assert!(m.contains("- one\n- two\n  continued\n\n  - nested"), "{m}");
    assert!(m.contains("1. first\n1. second"), "{m}");
    assert!(m.contains("- **term**: Its definition."), "{m}");
    assert!(m.contains("- **param url**: The URL."), "{m}");
}

#[test]
fn metadata_fields_at_the_top_are_not_text() {
    let page = to_markdown(":orphan:\n:description: About the API.\n\nAPI\n===\n\nText.\n");
    let fields: Vec<(&str, &str, usize)> = page
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.value.as_str(), f.line))
        .collect();
    assert_eq!(
        fields,
        vec![("orphan", "", 1), ("description", "About the API.", 2)]
    );
    assert!(
        page.markdown.trim_start().starts_with("# API"),
        "{}",
        page.markdown
    );
    // Lines keep their numbers: the title is on line 4 of the page.
    assert_eq!(page.markdown.lines().nth(3), Some("# API"));
}

#[test]
fn comments_become_html_comments_and_silent_directives_vanish() {
    let m = md(
        ".. This file is generated; ignore previous instructions.\n   second line\n\nText.\n\n.. toctree::\n   :maxdepth: 2\n\n   user/install\n\n.. index:: single: foo\n",
    );
    assert!(
        m.starts_with(
            "<!-- This file is generated; ignore previous instructions.\nsecond line -->"
        ),
        "{m}"
    );
    assert!(!m.contains("user/install") && !m.contains("index"), "{m}");
}

#[test]
fn tables_become_pipe_tables() {
    let m = md(
        "+-------+--------+\n| Name  | Value  |\n+=======+========+\n| a     | one    |\n|       | more   |\n+-------+--------+\n\n=====  =====\nA      B\n=====  =====\nx      y\n       z\n=====  =====\n\n.. list-table:: Limits\n   :header-rows: 1\n\n   * - Key\n     - Size\n   * - ``a``\n     - 1\n\n.. csv-table::\n   :header: \"Code\", \"Meaning\"\n\n   200, \"OK, fine\"\n",
    );
    assert!(
        m.contains("| Name | Value |\n|---|---|\n| a | one more |"),
        "{m}"
    );
    assert!(m.contains("| A | B |\n|---|---|\n| x | y z |"), "{m}");
    assert!(
        m.contains("**Limits**\n\n| Key | Size |\n|---|---|\n| `a` | 1 |"),
        "{m}"
    );
    assert!(
        m.contains("| Code | Meaning |\n|---|---|\n| 200 | OK, fine |"),
        "{m}"
    );
}

#[test]
fn includes_are_written_for_the_includer_and_api_entries_keep_their_names() {
    let m = md(
        ".. literalinclude:: ../examples/app.py\n   :lines: 3-9\n\n.. include:: ../CHANGES.rst\n\n.. autofunction:: requests.get\n\n.. py:function:: send(request, **kwargs)\n\n   Sends it.\n",
    );
    assert!(
        m.contains("```python\n{{#include ../examples/app.py:3:9}}\n```"),
        "{m}"
    );
    assert!(m.contains("{{#include ../CHANGES.rst}}"), "{m}");
    assert!(m.contains("**`requests.get`**"), "{m}");
    assert!(
        m.contains("**`send(request, **kwargs)`**\n\nSends it."),
        "{m}"
    );
}

#[test]
fn prose_that_markdown_would_misread_is_escaped() {
    let m = md("Item\n# not a heading but a hash\n\nIn\n1990. was a year\n");
    assert!(m.contains("\\# not a heading"), "{m}");
    assert!(m.contains("\\1990. was a year"), "{m}");
    let blocks = crate::markdown::blocks(&m);
    assert!(
        blocks
            .iter()
            .all(|b| !matches!(b, crate::markdown::Block::Heading(_))),
        "{blocks:?}"
    );
}

#[test]
fn never_panics_on_odd_input() {
    for text in [
        "",
        "..",
        ".. ::",
        "::",
        "=",
        "==\n==",
        "+",
        "+-\n|",
        "* ",
        "#.",
        ":",
        "::\n\n  x",
        "`",
        "``",
        "`a",
        ":ref:`",
        "|",
        "[#]_",
        "a_",
        "====  ===\n",
        ".. |x|",
        ".. _:",
        "\t\tx",
        "é\n==",
        ".. note::",
        ".. list-table::\n\n   *",
        ".. csv-table::\n\n   \"a",
    ] {
        let _ = to_markdown(text);
    }
}
