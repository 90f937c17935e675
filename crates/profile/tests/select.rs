//! Selections: threads by id or name, ranks, processes; the profile kept to a selection; the
//! worded, bounded error of a selection that keeps nothing; and the timeline's record of the
//! threads its filter was offered.
#![allow(clippy::unwrap_used)]

use profcodec_profile::timeline::{Filter, Timeline, Tracks};
use profcodec_profile::{
    Combine, Context, ContextFilter, Frame, IdKind, Measured, Profile, ProfileBuilder, Query,
    QueryError, Selection, Unit,
};

/// `threads` threads on `ranks` ranks (thread `t` of rank `r` named `worker t` when `named`),
/// each with `1 + t` nanoseconds in `main`, and a summary context of everything.
fn profile(ranks: u64, threads: u64, named: bool) -> Profile {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let main = b.intern_string("main").unwrap();
    let main = b.intern_frame(Frame::function(main)).unwrap();
    let summary = b.intern_context(Context::summary()).unwrap();
    let mut total = 0.0;
    for r in 0..ranks {
        for t in 0..threads {
            let mut context = Context::new([(IdKind::Rank, r), (IdKind::Thread, t)]);
            if named {
                context = context.with_name(b.intern_string(&format!("worker {t}")).unwrap());
            }
            let context = b.intern_context(context).unwrap();
            let value = 1.0 + t as f64;
            b.add_sample(context, [main], time, value).unwrap();
            total += value;
        }
    }
    b.add_sample(summary, [main], time, total).unwrap();
    b.build()
}

fn total(profile: &Profile, contexts: ContextFilter) -> f64 {
    let query = Query::new().contexts(contexts);
    profile.top(&query).unwrap().total.self_value
}

#[test]
fn threads_match_by_id_or_name_and_ranks_by_number() {
    let p = profile(2, 3, true);
    let by_name = Selection::new().threads(["worker 2"]);
    let by_id = Selection::new().threads(["2"]);
    assert_eq!(by_name.select(&p).unwrap(), by_id.select(&p).unwrap());
    assert_eq!(total(&p, ContextFilter::Select(by_id)), 6.0);
    let rank1 = Selection::new().ranks([1]);
    assert_eq!(total(&p, ContextFilter::Select(rank1.clone())), 6.0);
    let both = rank1.threads(["0", "worker 1"]);
    assert_eq!(total(&p, ContextFilter::Select(both)), 3.0);
    // A selection never reads the summary, which sums every thread.
    let all = Selection::new().threads(["0", "1", "2"]);
    assert!(!all.select(&p).unwrap()[0]);
    assert_eq!(total(&p, ContextFilter::Select(all)), 12.0);
    assert!(Selection::new().keeps_all());
}

#[test]
fn a_profile_kept_to_a_selection_shows_only_it() {
    let mut p = profile(2, 3, false);
    let selection = Selection::new().threads(["1"]);
    p.keep_selected(&selection).unwrap();
    assert_eq!(p.contexts().len(), 2);
    assert!(p.contexts().all(|(_, c)| c.id(IdKind::Thread) == Some(1)));
    // Every reader sees the selection: the whole program is now the two threads 1.
    assert_eq!(total(&p, ContextFilter::Whole), 4.0);
    let mean = Query::new().combine(Combine::Mean);
    assert_eq!(p.top(&mean).unwrap().total.self_value, 2.0);
    for column in p.node_value_columns() {
        assert!(column.context().index() < 2);
    }
    // Keeping everything changes nothing.
    let mut whole = profile(2, 3, false);
    let before = whole.clone();
    whole.keep_selected(&Selection::new()).unwrap();
    assert_eq!(whole, before);
}

#[test]
fn a_selection_that_keeps_nothing_says_what_there_is() {
    let p = profile(1, 3, true);
    let err = |s: Selection| s.select(&p).unwrap_err().to_string();
    assert_eq!(
        err(Selection::new().threads(["Worker 9", "7"])),
        "no thread matches 'Worker 9' or '7'; the inputs have threads: 0 worker 0, 1 worker 1, \
         2 worker 2"
    );
    assert_eq!(
        err(Selection::new().ranks([3])),
        "no rank matches 3; the inputs have ranks: 0"
    );
    assert_eq!(
        err(Selection::new().processes([4711])),
        "no process matches 4711; the inputs record no processes"
    );
    let p2 = profile(2, 2, false);
    assert_eq!(
        Selection::new()
            .threads(["1"])
            .ranks([0])
            .processes([1])
            .select(&p2)
            .unwrap_err()
            .to_string(),
        "no process matches 1; the inputs record no processes"
    );
    // Through a query, the same words.
    let query = Query::new().contexts(ContextFilter::Select(Selection::new().ranks([9])));
    assert!(matches!(p.top(&query), Err(QueryError::NoMatch(_))));
    // A profile without threads says so.
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let main = b.intern_string("main").unwrap();
    let main = b.intern_frame(Frame::function(main)).unwrap();
    let whole = b.intern_context(Context::new([])).unwrap();
    b.add_sample(whole, [main], time, 1.0).unwrap();
    let flat = b.build();
    assert_eq!(
        Selection::new()
            .threads(["1"])
            .select(&flat)
            .unwrap_err()
            .to_string(),
        "no thread matches '1'; the inputs record no threads"
    );
}

/// Thousands of threads with long names: the message lists a dozen and counts the rest.
#[test]
fn the_error_stays_short_whatever_the_inputs_hold() {
    let p = profile(3, 2000, true);
    let message = Selection::new()
        .threads(["nope"])
        .select(&p)
        .unwrap_err()
        .to_string();
    assert!(message.ends_with(", … (2000 in all)"), "{message}");
    assert!(message.len() < 400, "{message}");
}

#[test]
fn a_timeline_notes_the_threads_its_filter_was_offered() {
    struct Nothing;
    impl profcodec_profile::timeline::Sink for Nothing {
        fn open(&mut self, _: &profcodec_profile::timeline::Track<'_>) -> std::io::Result<()> {
            Ok(())
        }
        fn close(&mut self, _: u64) -> std::io::Result<()> {
            Ok(())
        }
        fn begin(
            &mut self,
            _: u64,
            _: u64,
            _: profcodec_profile::timeline::Name<'_>,
            _: Option<profcodec_profile::timeline::Location<'_>>,
            _: Option<profcodec_profile::timeline::CallPath<'_>>,
            _: &[profcodec_profile::timeline::Arg<'_>],
        ) -> std::io::Result<()> {
            Ok(())
        }
        fn end(&mut self, _: u64, _: u64) -> std::io::Result<()> {
            Ok(())
        }
        fn instant(
            &mut self,
            _: u64,
            _: u64,
            _: profcodec_profile::timeline::Name<'_>,
            _: &[profcodec_profile::timeline::Arg<'_>],
        ) -> std::io::Result<()> {
            Ok(())
        }
        fn counter(&mut self, _: u64, _: u64, _: f64) -> std::io::Result<()> {
            Ok(())
        }
        fn finish(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let offer = |filter: &Filter| {
        let mut tracks = Tracks::new();
        let mut sink = Nothing;
        let mut timeline = Timeline::new(&mut sink, filter, &mut tracks);
        let kept = [
            timeline.keeps(None, Some(10), Some("Main")),
            timeline.keeps(Some(1), Some(11), Some("Worker")),
        ];
        (kept, tracks.unmatched(filter).map(|e| e.to_string()))
    };
    assert_eq!(offer(&Filter::new()), ([true, true], None));
    let mut by_name = Filter::new();
    by_name.threads = vec!["Worker".to_owned()];
    assert_eq!(offer(&by_name), ([false, true], None));
    let mut missing = Filter::new();
    missing.threads = vec!["Worker 9".to_owned()];
    assert_eq!(
        offer(&missing),
        (
            [false, false],
            Some(
                "no thread matches 'Worker 9'; the inputs have threads: 10 Main, 11 Worker"
                    .to_owned()
            )
        )
    );
    let mut rank = Filter::new();
    rank.ranks = vec![2];
    assert_eq!(
        offer(&rank).1.unwrap(),
        "no rank matches 2; the inputs have ranks: 0, 1"
    );
}
