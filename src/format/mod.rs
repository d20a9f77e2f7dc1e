//! What a compiled output is, for the stage that renders it, the pipeline that writes it and
//! the readers (`serve`, `publish`, `check`): its layout and file names, the lock (`c2s.lock`),
//! the rendered files handed to the writer, and the skill platforms' limits.

mod codec;
pub mod content;
pub mod layout;
pub mod limits;
pub mod lock;
pub mod state;

pub use content::{Content, FileRefs, Files};
pub use layout::{Layout, SKILLS, list_files, sibling, skill_names, split_skill};
pub use state::STATE_FILE;

/// The lock file at the output root: sources, outputs, config, models (see `lock`).
pub const LOCK_FILE: &str = "c2s.lock";

/// The publish manifest `c2s publish` keeps in the output (builds carry it over).
pub const PUBLISH_FILE: &str = "c2s-publish.json";
