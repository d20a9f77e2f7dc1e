use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let f = root.join(rel);
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(f, text).unwrap();
}

fn page(path: &str) -> NavItem {
    NavItem::Page {
        title: None,
        path: path.into(),
    }
}

#[test]
fn the_root_documents_toctrees_make_sections_by_caption_or_by_the_section_they_sit_in() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "conf.py", "project = 'x'\nmaster_doc = 'start'\n");
    write(
        d,
        "start.rst",
        "Home\n====\n\nUser Guide\n----------\n\n.. toctree::\n\n   user/install\n\n.. toctree::\n   :maxdepth: 1\n\n   user/usage\n\n.. toctree::\n   :caption: API\n\n   api/index\n   https://example.com\n",
    );
    write(d, "user/install.rst", "Install\n=======\n");
    write(d, "user/usage.md", "# Usage\n");
    write(
        d,
        "api/index.rst",
        "API\n===\n\n.. toctree::\n   :glob:\n\n   *\n   ../start\n",
    );
    write(d, "api/b.rst", "B\n=\n");
    write(d, "api/a.rst", "A\n=\n");
    let nav = read(&d.join("conf.py")).unwrap().unwrap();
    assert_eq!(nav.docs_dir, d);
    assert_eq!(
        nav.items,
        vec![
            NavItem::Section {
                title: "User Guide".into(),
                items: vec![page("user/install.rst"), page("user/usage.md")],
            },
            NavItem::Section {
                title: "API".into(),
                items: vec![NavItem::Section {
                    // The page with a toctree of its own: a section titled as the page is, the
                    // glob's pages in name order, the root page (a cycle) left out.
                    title: "API".into(),
                    items: vec![page("api/index.rst"), page("api/a.rst"), page("api/b.rst")],
                }],
            },
        ]
    );
}

#[test]
fn without_a_root_document_or_toctrees_the_folders_are_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "conf.py", "project = 'x'\n");
    assert_eq!(read(&d.join("conf.py")).unwrap(), None);
    write(d, "index.rst", "Home\n====\n\nNo toctree.\n");
    assert_eq!(read(&d.join("conf.py")).unwrap(), None);
}

#[test]
fn entries_with_titles_and_absolute_targets() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "conf.py", "");
    write(
        d,
        "index.rst",
        "Home\n====\n\n.. toctree::\n\n   Getting started <guide/start>\n   self\n",
    );
    write(
        d,
        "guide/start.rst",
        "Start\n=====\n\n.. toctree::\n\n   /guide/more\n",
    );
    write(d, "guide/more.rst", "More\n====\n");
    let nav = read(&d.join("conf.py")).unwrap().unwrap();
    assert_eq!(
        nav.items,
        vec![NavItem::Section {
            title: "Getting started".into(),
            items: vec![
                NavItem::Page {
                    title: Some("Getting started".into()),
                    path: "guide/start.rst".into()
                },
                page("guide/more.rst"),
            ],
        }]
    );
}
