use super::*;
use crate::ingest::Origin;

fn doc(rel: &str, text: &str) -> Document {
    let mut d = Document::served(rel.into(), rel.into(), rel.into(), text.into(), Vec::new());
    d.origin = Some(Origin {
        root: 0,
        rel: rel.into(),
        multi: false,
        line: 1,
        position: None,
    });
    d
}

fn resolve(docs: &[Document], root: &Path, source: Option<(&str, &Path)>) -> (Links, Vec<String>) {
    let shown = |d: usize| docs[d].source.clone();
    let roots = vec![root.to_path_buf()];
    let inputs = Inputs {
        docs,
        roots: &roots,
        source,
        shown: &shown,
        served: &[crate::structure::nav::Served {
            base: Some("/site/".into()),
            public: None,
            redirects: vec![
                ("/old/intro".into(), "/guide/intro".into()),
                ("/legacy/*".into(), "/guide/*".into()),
            ],
        }],
    };
    let mut diags = Diagnostics::default();
    let links = Links::resolve(&inputs, &mut diags);
    (
        links,
        diags.warnings.iter().map(|w| w.to_string()).collect(),
    )
}

/// Each document's text with document links written as `<target rel>#anchor`.
fn written(links: &Links, docs: &[Document], d: usize) -> String {
    let text = &docs[d].text;
    links
        .apply(d, text, 0..text.len(), |t, anchor, _, _| {
            let rel = &docs[t].origin.as_ref().unwrap().rel;
            Written::Dest(match anchor {
                Some(a) => format!("<{rel}>#{a}"),
                None => format!("<{rel}>"),
            })
        })
        .into_owned()
}

#[test]
fn pages_are_found_as_each_generator_names_them() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = vec![
        doc(
            "guide/intro.md",
            "[a](../reference/settings.md#x) [b](cargo-build.html) [c](/config/) [d](./features) [e](../index.html) [f](../guide/) [g](setup%20guide.md) [h](/site/config/) [i](/old/intro/) [j](/legacy/features)",
        ),
        doc("guide/cargo-build.md", "x"),
        doc("reference/settings.md", "x"),
        doc("config/index.md", "x"),
        doc("guide/features.md", "x"),
        doc("README.md", "x"),
        doc("guide/README.md", "x"),
        doc("guide/setup guide.md", "x"),
    ];
    let (links, w) = resolve(&docs, tmp.path(), None);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(links.to_documents, 10);
    assert_eq!(
        written(&links, &docs, 0),
        "[a](<reference/settings.md>#x) [b](<guide/cargo-build.md>) [c](<config/index.md>) [d](<guide/features.md>) [e](<README.md>) [f](<guide/README.md>) [g](<guide/setup guide.md>) [h](<config/index.md>) [i](<guide/intro.md>) [j](<guide/features.md>)"
    );
}

#[test]
fn other_files_point_to_the_source_url_or_become_text_and_broken_links_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    std::fs::create_dir_all(root.join("img")).unwrap();
    std::fs::write(root.join("img/chart.png"), "png").unwrap();
    std::fs::write(tmp.path().join("pyproject.toml"), "").unwrap();
    let text = "Intro.\n\n![A chart](img/chart.png) and [the config](../pyproject.toml).\n\nSee [gone](missing.md#x) and [Ref][r].\n\n[r]: img/chart.png\n";
    let docs = vec![doc("index.md", text)];
    let (links, w) = resolve(&docs, &root, None);
    assert_eq!(links.broken, 1);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("index.md:5: link to missing.md#x points to no page or file"),
        "{w:?}"
    );
    assert_eq!(
        written(&links, &docs, 0),
        "Intro.\n\nA chart and the config.\n\nSee gone and Ref.\n\n\n"
    );
    // With a source address, a file that is not a document is linked there.
    let (links, _) = resolve(
        &docs,
        &root,
        Some(("https://github.com/o/r/blob/main/", tmp.path())),
    );
    assert_eq!(
        written(&links, &docs, 0),
        "Intro.\n\n![A chart](https://github.com/o/r/blob/main/docs/img/chart.png) and [the config](https://github.com/o/r/blob/main/pyproject.toml).\n\nSee gone and [Ref](https://github.com/o/r/blob/main/docs/img/chart.png).\n\n\n"
    );
}

#[test]
fn addresses_anchors_and_code_are_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[site](https://x.org/a.md) [mail](mailto:a@b.c) [top](#top) [net](//cdn.x/y.js)\n\n`[c](nowhere.md)`\n\n```\n[d](nowhere.md)\n```\n";
    let docs = vec![doc("a.md", text)];
    let (links, w) = resolve(&docs, tmp.path(), None);
    assert!(w.is_empty() && !links.has(0), "{w:?}");
    assert_eq!(written(&links, &docs, 0), text);
}

#[test]
fn a_part_of_a_text_rewrites_only_its_own_links() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[one](b.md)\n\n[two](b.md#z)\n";
    let docs = vec![doc("a.md", text), doc("b.md", "x")];
    let (links, _) = resolve(&docs, tmp.path(), None);
    let second = text.find("[two]").unwrap();
    let part = links.apply(0, text, second..text.len(), |_, a, _, _| {
        Written::Dest(format!("B#{}", a.unwrap_or("")))
    });
    assert_eq!(part, "[two](B#z)\n");
}

#[test]
fn a_link_around_an_image_becomes_the_images_text() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[![logo](logo.png)](missing/)";
    let docs = vec![doc("a.md", text)];
    let (links, _) = resolve(&docs, tmp.path(), None);
    assert_eq!(written(&links, &docs, 0), "logo");
}
