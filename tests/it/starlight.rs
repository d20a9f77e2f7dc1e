//! A Starlight site compiled as its authors wrote it (`tests/fixtures/starlight`: pages of
//! Starlight's own docs): `c2s init` finds its pages' folder, the sidebar in
//! `astro.config.mjs` shapes the tree, the other locales' pages are left out, root links
//! (`/getting-started/`) resolve, and components are read as the site shows them.

use std::path::Path;

use crate::common::{c2s, copy_dir, ok, output_page, repo, stderr};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_starlight_site_follows_its_sidebar_and_leaves_other_locales_out() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    copy_dir(&repo().join("tests/fixtures/starlight"), d);
    std::fs::create_dir_all(d.join(".git")).unwrap();
    let o = c2s(d, &["init"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("Starlight (docs/astro.config.mjs), pages in docs/src/content/docs/"),
        "{err}"
    );
    let o = c2s(d, &["build", "--json"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("Structured from docs/astro.config.mjs"),
        "{err}"
    );
    assert!(
        err.contains("de/getting-started.mdx (another language's or version's page"),
        "{err}"
    );
    // Eleven pages: two German ones are not pages, nor is the empty 404 page.
    assert!(err.contains("Ingested 8 documents"), "{err}");
    let out = d.join("c2s-out");
    let docs = read(&out.join("documents.json"));
    assert!(!docs.contains("/de/"), "{docs}");
    // A root link resolves to the page it names, trailing slash and all.
    let manual = output_page(&out, "manual-setup.mdx");
    assert!(
        manual.contains("[Getting Started guide](getting-started.md#create-a-new-project)"),
        "{manual}"
    );
    // A fence indented inside a component is a fence; the component tags are gone.
    let asides = output_page(&out, "components/asides.mdx");
    assert!(
        asides.contains("\nOther content is also supported in asides.\n\n```js\n// A code snippet, for example.\n```\n"),
        "{asides}"
    );
    // A link card keeps its title and description; `:::tip[Title]` titles a quote.
    let cards = output_page(&out, "components/link-cards.mdx");
    assert!(
        cards.contains("> **Customizing Starlight: Learn how to make your Starlight site your own"),
        "{cards}"
    );
    let search = output_page(&out, "guides/site-search.mdx");
    assert!(
        !search.contains("<Aside") && !search.contains(":::"),
        "{search}"
    );
    ok(d, &["check"]);
}
