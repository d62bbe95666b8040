//! The engine: its root directory, the git it drives, its options. One per daemon, shared
//! by the handle (`checkpoints.rs`) and every workspace it gives out.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::git::{Git, Setup};
use crate::layout::Layout;
use crate::options::Options;
use crate::paths;
use crate::trees::KnownTrees;

#[derive(Debug)]
pub(crate) struct Engine {
    pub layout: Layout,
    pub git: Git,
    pub options: Options,
    /// `options.never_capture` and the root, canonical.
    pub never: Vec<PathBuf>,
    /// The trees each repository holds, so a snapshot packs only new ones.
    pub trees: KnownTrees,
}

impl Engine {
    /// The store under `root`, created, and the git found to drive it.
    pub(crate) fn open(root: &Path, options: Options) -> Result<Self, Error> {
        let layout = Layout::at(root)?;
        let excludes_file =
            Git::user_excludes_file(&options.git).unwrap_or_else(|| layout.empty_file.clone());
        let git = Git::probe(
            &options.git,
            &Setup {
                empty_dir: &layout.empty_dir,
                empty_file: &layout.empty_file,
                excludes_file: &excludes_file,
            },
        )?;
        layout.create()?;
        let mut never = vec![
            paths::canonical(&layout.root).map_err(|e| Error::io("resolve", &layout.root, e))?,
        ];
        never.extend(
            options
                .never_capture
                .iter()
                .filter_map(|d| paths::canonical(d).ok()),
        );
        Ok(Self {
            layout,
            git,
            options,
            never,
            trees: KnownTrees::default(),
        })
    }
}
