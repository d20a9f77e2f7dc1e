//! What shapes a docs site besides its pages (issue 48): the navigation and category files are
//! inputs of the build, so `check` names an edited one and the next build follows it; pages
//! the site does not build (an mdBook file that SUMMARY.md does not list) are not documents;
//! frontmatter positions order a folder's rows; MDX and Hugo pages are read as their sites
//! show them.

use std::path::Path;

use crate::common::{c2s, stderr};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn write(root: &Path, rel: &str, text: &str) {
    let f = root.join(rel);
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(f, text).unwrap();
}

/// An MkDocs project: `mkdocs.yml` beside `docs/`, two nav sections of three pages each.
fn mkdocs_project(d: &Path) {
    std::fs::create_dir_all(d.join(".git")).unwrap();
    let mut nav = String::from("site_name: Shop\nnav:\n");
    for (title, folder, pages) in [
        ("Payments", "pay", ["cards", "refunds", "invoices"]),
        ("Shipping", "ship", ["rates", "tracking", "returns"]),
    ] {
        nav.push_str(&format!("  - {title}:\n"));
        for p in pages {
            nav.push_str(&format!("    - {folder}/{p}.md\n"));
            write(
                d,
                &format!("docs/{folder}/{p}.md"),
                &format!("# {p}\n\nHow {p} work for {folder} in the shop, step by step.\n"),
            );
        }
    }
    write(d, "mkdocs.yml", &nav);
}

#[test]
fn an_edited_nav_file_makes_the_output_stale_and_the_build_follows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    mkdocs_project(d);
    let args = ["docs", "--out", "o"];
    let o = c2s(d, &[&["build"][..], &args].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let lock = std::fs::read_to_string(d.join("o/c2s.lock")).unwrap();
    assert!(lock.contains("mkdocs.yml"), "{lock}");
    let o = c2s(d, &[&["check"][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The authors reorder and retitle the nav: the committed output no longer follows it.
    let nav = std::fs::read_to_string(d.join("mkdocs.yml")).unwrap();
    std::fs::write(d.join("mkdocs.yml"), nav.replace("Payments", "Billing")).unwrap();
    let o = c2s(d, &[&["check"][..], &args].concat());
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("modified source: ../mkdocs.yml"), "{said}");
    let o = c2s(d, &[&["build"][..], &args].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = c2s(d, &[&["check"][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn an_mdbook_file_its_summary_does_not_list_is_not_a_page() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join(".git")).unwrap();
    write(d, "book.toml", "[book]\ntitle = \"Guide\"\n");
    write(
        d,
        "src/SUMMARY.md",
        "# Summary\n\n- [Install](install.md)\n- [Watch](watch.md)\n",
    );
    write(
        d,
        "src/install.md",
        "# Install\n\nRun the installer once.\n",
    );
    // As mdBook's own guide does: a shared part that chapters include, listed nowhere.
    write(
        d,
        "src/watch.md",
        "# Watch\n\nThe watcher:\n\n{{#include arg-watcher.md}}\n",
    );
    write(
        d,
        "src/arg-watcher.md",
        "Rebuilds the book on every change of a source file.\n",
    );
    let o = c2s(d, &["build", "src", "--out", "o"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("arg-watcher.md (not a chapter: the book's SUMMARY.md does not list it)"),
        "{err}"
    );
    let docs = std::fs::read_to_string(d.join("o/documents.json")).unwrap();
    assert!(!docs.contains("\"arg-watcher.md\""), "{docs}");
    // Its text is read where it is included.
    let all: String = walkdir(&d.join("o/skills"));
    assert!(all.contains("Rebuilds the book on every change"), "{all}");
}

/// The text of every file under `dir`.
fn walkdir(dir: &Path) -> String {
    crate::common::files(dir)
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap_or_default())
        .collect()
}

#[test]
fn mdx_and_hugo_pages_are_read_as_their_sites_show_them() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // A Docusaurus folder (MDX) and a Hugo content folder (TOML frontmatter, shortcodes).
    write(
        d,
        "site/docs/install.mdx",
        "---\nsidebar_position: 2\ntitle: Install the agent\n---\n\nimport Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n\n<Tabs>\n  <TabItem value=\"npm\" label=\"npm\">\n\n```bash\nnpm install agent\n```\n\n  </TabItem>\n</Tabs>\n\nThen read the [configuration](./configure) page.\n",
    );
    write(
        d,
        "site/docs/configure.md",
        "---\nsidebar_position: 1\n---\n# Configure the agent\n\nSet the <Highlight color=\"#25c2a0\">token</Highlight> first.\n",
    );
    write(
        d,
        "site/content/_index.md",
        "+++\ntitle = \"Workshop\"\nweight = 1\n+++\n\nThe workshop, module by module.\n",
    );
    write(
        d,
        "site/content/containers.md",
        "+++\ntitle = \"Container Orchestration\"\nweight = 2\n+++\n\n{{% notice tip %}}\nFargate runs containers without servers.\n{{% /notice %}}\n\nSee the [workshop]({{< ref \"_index.md\" >}}).\n",
    );
    let o = c2s(d, &["build", "site", "--out", "o"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("points to no page"), "{err}");
    let all = walkdir(&d.join("o/skills"));
    for gone in [
        "import ",
        "<Tabs",
        "<TabItem",
        "<Highlight",
        "{{%",
        "{{<",
        "+++",
    ] {
        assert!(!all.contains(gone), "{gone} in\n{all}");
    }
    for kept in [
        "Install the agent",
        "npm install agent",
        "Set the token first",
        "Container Orchestration",
        "Fargate runs containers",
    ] {
        assert!(all.contains(kept), "{kept} not in\n{all}");
    }
    // `sidebar_position` orders the folder's rows: configure (1) before install (2).
    let nav = std::fs::read_dir(d.join("o/skills"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| std::fs::read_to_string(p.join("SKILL.md")).unwrap_or_default())
        .find(|s| s.contains("install.md"))
        .expect("a skill lists install.md");
    assert!(
        nav.find("configure.md").unwrap() < nav.find("install.md").unwrap(),
        "{nav}"
    );
}

/// A Docusaurus site's `sidebars.js` (kafka-backup's, cut down: the real file's categories,
/// nested category, `link` items with computed `${siteUrl}` addresses, `export default`).
const SIDEBARS: &str = r#"import config from './docusaurus.config.js';

const siteUrl = config.url + config.baseUrl.replace(/\/$/, '');

/** @type {import('@docusaurus/plugin-content-docs').SidebarsConfig} */
const sidebars = {
  docsSidebar: [
    'intro',
    {
      type: 'category',
      label: 'Deployment',
      items: [
        'deployment/index',
        'deployment/docker',
        {
          type: 'category',
          label: 'Cloud Setup',
          items: [
            'deployment/cloud-setup/aws-s3',
            'deployment/cloud-setup/gcs',
          ],
        },
      ],
    },
    {
      type: 'category',
      label: 'Operations Guides',
      items: [
        'guides/backup-to-s3',
        'guides/restore-pitr',
        'guides/security-setup',
      ],
    },
    {
      type: 'category',
      label: 'LLM Resources',
      collapsed: false,
      items: [
        {
          type: 'link',
          label: 'llms.txt',
          href: `${siteUrl}/llms.txt`,
        },
      ],
    },
  ],
};

export default sidebars;
"#;

#[test]
fn a_docusaurus_sidebars_file_is_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join(".git")).unwrap();
    write(d, "site/sidebars.js", SIDEBARS);
    // Doc ids drop number prefixes: `guides/01-backup-to-s3.md` is `guides/backup-to-s3`.
    for (path, words) in [
        ("intro.md", "what the backup tool does"),
        ("deployment/index.md", "deploy the backup service"),
        (
            "deployment/docker.md",
            "run the backup container with docker",
        ),
        (
            "deployment/cloud-setup/aws-s3.md",
            "an S3 bucket for backups",
        ),
        (
            "deployment/cloud-setup/gcs.md",
            "a Google Cloud Storage bucket",
        ),
        ("guides/01-backup-to-s3.md", "back up a topic to S3"),
        ("guides/02-restore-pitr.md", "restore to a point in time"),
        ("guides/03-security-setup.md", "TLS and SASL for the backup"),
    ] {
        let title = path.rsplit('/').next().unwrap().trim_end_matches(".md");
        write(
            d,
            &format!("site/docs/{path}"),
            &format!("# {title}\n\nHow to {words}, step by step.\n"),
        );
    }
    let args = ["site/docs", "--out", "o", "--set", "tree.structure=folders"];
    let o = c2s(d, &[&["build"][..], &args].concat());
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("Structured from site/sidebars.js"), "{err}");
    let skills: Vec<String> = std::fs::read_dir(d.join("o/skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        skills.iter().any(|s| s.ends_with("operations-guides")),
        "{skills:?}"
    );
    // The sidebar's order orders the rows: backup, restore, security (not path order alone).
    let guides = walkdir(
        &d.join("o/skills").join(
            skills
                .iter()
                .find(|s| s.ends_with("operations-guides"))
                .unwrap(),
        ),
    );
    let at = |f: &str| guides.find(f).unwrap_or_else(|| panic!("{f}: {guides}"));
    assert!(
        at("01-backup-to-s3.md") < at("02-restore-pitr.md"),
        "{guides}"
    );
    // The sidebars file is an input: an edit makes the output stale.
    std::fs::write(
        d.join("site/sidebars.js"),
        SIDEBARS.replace("Operations Guides", "Runbooks"),
    )
    .unwrap();
    let o = c2s(d, &[&["check"][..], &args].concat());
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("modified source: ../sidebars.js"), "{said}");
}
