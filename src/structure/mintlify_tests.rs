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

fn section(title: &str, items: Vec<NavItem>) -> NavItem {
    NavItem::Section {
        title: title.into(),
        items,
    }
}

#[test]
fn tabs_groups_and_roots_are_sections_in_order_and_other_languages_are_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for p in [
        "index.mdx",
        "quickstart.md",
        "cli/index.mdx",
        "cli/install.mdx",
        "api/intro.mdx",
        "es/index.mdx",
        "es/quickstart.mdx",
        "es/only.mdx",
    ] {
        write(d, p, "---\ntitle: x\n---\n");
    }
    write(
        d,
        "docs.json",
        r#"{"name": "X", "theme": "mint", "navigation": {"languages": [
            {"language": "en", "tabs": [
                {"tab": "Docs", "groups": [
                    {"group": "Start", "pages": ["index", "/quickstart",
                        {"group": "CLI", "root": "cli/index", "pages": ["cli/install", "cli/missing"]}]}]},
                {"tab": "API", "groups": [{"group": "Reference", "openapi": "openapi.json",
                    "pages": ["api/intro", "GET /users"]}]},
                {"tab": "Blog", "href": "https://example.com/blog"}]},
            {"$ref": "./es.json"}]}}"#,
    );
    write(
        d,
        "es.json",
        r#"{"language": "es", "groups": [{"group": "Inicio", "pages": ["es/index", "es/quickstart"]}]}"#,
    );
    let site = read(&d.join("docs.json")).unwrap().unwrap();
    assert_eq!(site.nav.docs_dir, d);
    assert_eq!(
        site.nav.items,
        vec![
            section(
                "Docs",
                vec![section(
                    "Start",
                    vec![
                        page("index.mdx"),
                        page("quickstart.md"),
                        section("CLI", vec![page("cli/index.mdx"), page("cli/install.mdx")]),
                    ]
                )]
            ),
            section(
                "API",
                vec![section("Reference", vec![page("api/intro.mdx")])]
            ),
        ]
    );
    let mut others: Vec<_> = site.others.iter().cloned().collect();
    others.sort();
    assert_eq!(others, ["es/index.mdx", "es/quickstart.mdx"]);
    assert_eq!(site.other_folders, ["es/"]);
}

#[test]
fn the_default_version_is_followed_and_a_default_language_wins_over_english() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for p in ["v2/a.mdx", "v1/a.mdx", "fr/b.mdx", "b.mdx"] {
        write(d, p, "# x\n");
    }
    write(
        d,
        "docs.json",
        r#"{"name": "X", "navigation": {"versions": [
            {"version": "v1", "pages": ["v1/a"]},
            {"version": "v2", "default": true, "pages": ["v2/a"]}]}}"#,
    );
    let site = read(&d.join("docs.json")).unwrap().unwrap();
    assert_eq!(site.nav.items, vec![page("v2/a.mdx")]);
    assert!(site.others.contains("v1/a.mdx"));
    assert_eq!(site.other_folders, ["v1/"], "the folder of all its pages");
    // A folder the followed version lists a page of is not the other version's.
    write(d, "v1/shared.mdx", "# x\n");
    write(
        d,
        "docs.json",
        r#"{"name": "X", "navigation": {"versions": [
            {"version": "v1", "pages": ["v1/a"]},
            {"version": "v2", "default": true, "pages": ["v2/a", "v1/shared"]}]}}"#,
    );
    let site = read(&d.join("docs.json")).unwrap().unwrap();
    assert!(site.others.contains("v1/a.mdx"));
    assert!(site.other_folders.is_empty(), "{:?}", site.other_folders);
    write(
        d,
        "docs.json",
        r#"{"name": "X", "navigation": {"languages": [
            {"language": "en", "pages": ["b"]},
            {"language": "fr", "default": true, "pages": ["fr/b"]}]}}"#,
    );
    let site = read(&d.join("docs.json")).unwrap().unwrap();
    assert_eq!(site.nav.items, vec![page("fr/b.mdx")]);
    assert!(site.others.contains("b.mdx"));
}

#[test]
fn mint_json_groups_go_under_the_tab_whose_url_holds_their_pages_and_old_versions_are_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for p in [
        "intro.mdx",
        "api-reference/users.mdx",
        "api-reference/auth.mdx",
        "v1/intro.mdx",
    ] {
        write(d, p, "# x\n");
    }
    write(
        d,
        "mint.json",
        r#"{"name": "X", "tabs": [{"name": "API Reference", "url": "api-reference"}],
            "versions": ["v2", "v1"],
            "anchors": [{"name": "Community", "url": "https://example.com"}],
            "navigation": [
                {"group": "Users", "pages": ["api-reference/users"]},
                {"group": "Old", "version": "v1", "pages": ["v1/intro"]},
                {"group": "Get Started", "pages": ["intro", {"group": "Nested", "pages": ["api-reference/auth"]}]}]}"#,
    );
    let site = read(&d.join("mint.json")).unwrap().unwrap();
    assert_eq!(
        site.nav.items,
        vec![
            section(
                "Get Started",
                vec![
                    page("intro.mdx"),
                    section("Nested", vec![page("api-reference/auth.mdx")])
                ]
            ),
            section(
                "API Reference",
                vec![section("Users", vec![page("api-reference/users.mdx")])]
            ),
        ]
    );
    assert!(site.others.contains("v1/intro.mdx"), "{:?}", site.others);
    assert_eq!(site.other_folders, ["v1/"]);
}

#[test]
fn a_docs_json_of_another_tool_is_not_mintlify_and_bad_json_names_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "docs.json", r#"{"entries": [1, 2]}"#);
    assert_eq!(config_in(d), None);
    write(
        d,
        "mint.json",
        "{\n  \"name\": \"X\",\n  \"navigation\": [\n}\n",
    );
    assert_eq!(
        config_in(d),
        Some(d.join("mint.json")),
        "broken, but Mintlify's"
    );
    let (file, msg) = read(&d.join("mint.json")).unwrap_err();
    assert_eq!(file, d.join("mint.json"));
    assert!(msg.contains("line 4"), "{msg}");
}

#[test]
fn redirects_are_read_from_docs_json_or_the_file_it_refers_to() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(
        d,
        "docs.json",
        r#"{"name": "X", "navigation": [], "redirects": {"$ref": "./redirects.json"}}"#,
    );
    write(
        d,
        "redirects.json",
        r#"[{"source": "/editor/drafts", "destination": "/editor/publishing"},
            {"source": "/old/*", "destination": "/new/*"},
            {"source": "/x", "destination": "https://example.com"}]"#,
    );
    let found = redirects(&d.join("docs.json"));
    assert_eq!(
        found,
        [
            (
                "/editor/drafts".to_string(),
                "/editor/publishing".to_string()
            ),
            ("/old/*".to_string(), "/new/*".to_string()),
        ]
    );
    let served = crate::structure::nav::Served {
        redirects: found,
        ..Default::default()
    };
    assert_eq!(
        served.redirect("/editor/drafts/").as_deref(),
        Some("/editor/publishing")
    );
    assert_eq!(served.redirect("/old/a/b").as_deref(), Some("/new/a/b"));
    assert_eq!(served.redirect("/older"), None);
}
