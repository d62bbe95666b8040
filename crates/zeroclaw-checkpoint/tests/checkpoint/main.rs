//! The checkpoint engine against real git, real files and temp dirs: one file per behaviour.

mod common;

mod restoring_each_snapshot_reproduces_the_earlier_tree;
