//! `merged_profile_for` leaves NYTProf's call tree out when a query reads flat values, and its
//! answers are the whole profile's: every NYTProf file of the corpus and of `testdata/`, alone
//! and all merged (with a file of another format), under every grouping, order, value type and
//! source, printed as `top` prints them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use profcodec::profile::{ContextFilter, GroupBy, Order, Query, Source};
use profcodec::query::TopOptions;
use profcodec::{MergeOptions, merged_profile, merged_profile_for};

fn nytprof_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".nytprof.out"))
        .collect();
    files.sort();
    files
}

fn inputs() -> Vec<PathBuf> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut files = nytprof_files(&testdata.join("nytprof"));
    if let Some(corpus) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof")
    {
        files.extend(nytprof_files(&corpus));
    }
    assert!(files.len() >= 3, "NYTProf inputs: {files:?}");
    files
}

fn queries() -> Vec<Query> {
    let mut queries = Vec::new();
    for group in [
        GroupBy::Function,
        GroupBy::Line,
        GroupBy::Module,
        GroupBy::Path,
    ] {
        for order in [Order::SelfValue, Order::Inclusive] {
            for value_type in [None, Some("calls"), Some("statements"), Some("time")] {
                for source in [Source::Auto, Source::Flat, Source::Tree] {
                    for contexts in [ContextFilter::Whole, ContextFilter::All] {
                        queries.push(Query {
                            value_type: value_type.map(str::to_owned),
                            order,
                            group,
                            contexts,
                            source,
                            ..Query::new()
                        });
                    }
                }
            }
        }
    }
    queries
}

/// `top`'s answer and its text, or the error's text.
fn answer(profile: &profcodec::profile::Profile, query: &Query) -> String {
    match profile.top(query) {
        Ok(table) => {
            let mut text = Vec::new();
            let options = TopOptions::new().table_options();
            profcodec::text::write_top(&mut text, profile, &table, &options).unwrap();
            format!("{table:?}\n{}", String::from_utf8(text).unwrap())
        }
        Err(e) => format!("error: {e}"),
    }
}

fn check(inputs: &[PathBuf]) {
    let options = MergeOptions::new();
    let whole = merged_profile(inputs, &options).unwrap();
    let mut left_out = 0;
    for query in queries() {
        let merged = merged_profile_for(inputs, &query, &options).unwrap();
        assert_eq!(
            answer(&merged.profile, &query),
            answer(&whole.profile, &query),
            "{inputs:?}: {query:?}"
        );
        if merged.call_tree_left_out {
            left_out += 1;
            // NYTProf's nodes are left out; another format's are kept.
            let nodes = merged.profile.nodes().len();
            assert!(
                nodes <= whole.profile.nodes().len(),
                "{inputs:?}: {query:?}"
            );
            if let [_] = inputs {
                assert_eq!(nodes, 0, "{inputs:?}: {query:?}");
            }
            assert_eq!(query.source_in(&merged.profile).ok(), Some(Source::Flat));
        }
    }
    // The default query (functions by self time) reads flat values: the tree was left out.
    let default = merged_profile_for(inputs, &Query::new(), &options).unwrap();
    assert!(default.call_tree_left_out, "{inputs:?}");
    assert!(left_out > 0);
}

#[test]
fn flat_only_answers_are_the_whole_profiles() {
    let inputs = inputs();
    for input in &inputs {
        check(std::slice::from_ref(input));
    }
    let mut all = inputs;
    all.push(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/statprofiler/features.statprof"),
    );
    check(&all);
}

/// A query whose value type has no flat values for its grouping (NYTProf's statement counts are
/// per line, not per sub) reads the call tree, which is then kept.
#[test]
fn a_query_of_the_tree_keeps_the_tree() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/nytprof/evals_small.nytprof.out");
    let query = Query::new().value_type("statements");
    let merged = merged_profile_for(&[&input], &query, &MergeOptions::new()).unwrap();
    assert!(!merged.call_tree_left_out);
    assert_ne!(merged.profile.nodes().len(), 0);
    let path = Query {
        group: GroupBy::Path,
        ..Query::new()
    };
    let merged = merged_profile_for(&[&input], &path, &MergeOptions::new()).unwrap();
    assert!(!merged.call_tree_left_out);
}
