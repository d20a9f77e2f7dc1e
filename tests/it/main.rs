//! Integration tests: one binary, one module per feature. Each runs the real `c2s` binary on
//! fixture folders and checks or snapshots what it writes.

mod agent;
mod answers;
mod bad_input;
mod batch;
mod batch_server;
mod build_example;
mod bundles;
mod cache;
mod check;
mod common;
mod config_cli;
mod datasets;
mod eval;
mod gpu;
mod hosts;
mod incremental;
mod interrupt;
mod invariants;
mod layout;
mod llm;
mod llm_server;
mod navigation;
mod onnx;
mod pack;
mod planted;
mod portable;
mod publish;
mod real_llm;
mod scale;
mod serve;
mod skill_pack;
mod skills_server;
mod state;
mod statfirst;
mod watch;
