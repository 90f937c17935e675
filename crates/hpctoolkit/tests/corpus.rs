//! The real databases of the corpus: every one validates, and `small.d` / `small.nostruct.d`
//! match HPCToolkit's own golden YAML dumps field by field.

use std::path::{Path, PathBuf};

use profcodec_hpctoolkit::Database;

fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
}

/// Every database directory of the corpus (those holding a meta.db).
fn databases(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = profcodec_testkit::corpus::files_below(root)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "meta.db"))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_corpus_database_validates() {
    let Some(root) = corpus() else { return };
    let dbs = databases(&root);
    assert!(dbs.len() >= 15, "found only {} databases", dbs.len());
    for dir in dbs {
        let db = Database::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        db.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
}

mod golden {
    //! The golden YAML dumps of HPCToolkit's `hpctesttool.formats.print`, compared field by
    //! field with what the views read.

    use std::collections::BTreeMap;

    use profcodec_hpctoolkit::read::{ContextNode, ScopeIndex, ScopeType};
    use profcodec_hpctoolkit::{Database, MetaDb};
    use serde_yaml_ng::Value;

    /// Strips YAML tags (`!meta.db/v4/...`).
    fn un(v: &Value) -> &Value {
        match v {
            Value::Tagged(t) => un(&t.value),
            v => v,
        }
    }

    fn get<'v>(v: &'v Value, key: &str) -> &'v Value {
        un(&un(v)[key])
    }

    fn seq(v: &Value) -> &[Value] {
        match un(v) {
            Value::Sequence(s) => s,
            Value::Null => &[],
            other => panic!("expected a sequence, found {other:?}"),
        }
    }

    fn s(v: &Value) -> &str {
        un(v)
            .as_str()
            .unwrap_or_else(|| panic!("expected a string, found {v:?}"))
    }

    fn u(v: &Value) -> u64 {
        un(v)
            .as_u64()
            .unwrap_or_else(|| panic!("expected an integer, found {v:?}"))
    }

    fn f(v: &Value) -> f64 {
        un(v)
            .as_f64()
            .unwrap_or_else(|| panic!("expected a number, found {v:?}"))
    }

    /// A flags list such as `[has_function, has_srcloc]`.
    fn flags(v: &Value) -> Vec<String> {
        let mut out: Vec<String> = seq(v).iter().map(|x| s(x).to_owned()).collect();
        out.sort();
        out
    }

    fn names_of_bits(bits: u64, names: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, n)| (*n).to_owned())
            .collect();
        out.sort();
        out
    }

    fn scope_type(t: ScopeType) -> &'static str {
        t.name().unwrap_or("other")
    }

    fn check_scope(meta: &MetaDb<'_>, idx: ScopeIndex, y: &Value) {
        let sc = meta.scope(idx).expect("scope");
        assert_eq!(sc.name, s(get(y, "scope_name")));
        assert_eq!(scope_type(sc.kind), s(get(y, "type")));
        assert_eq!(
            u64::from(sc.propagation_index),
            u(get(y, "propagation_index"))
        );
    }

    fn check_module(
        meta: &MetaDb<'_>,
        idx: Option<profcodec_hpctoolkit::read::ModuleIndex>,
        y: &Value,
    ) {
        match idx {
            None => assert!(un(y).is_null(), "module: expected {y:?}"),
            Some(i) => {
                let m = meta.module(i).expect("module");
                assert_eq!(m.path, s(get(y, "path")));
                assert_eq!(names_of_bits(m.flags.into(), &[]), flags(get(y, "flags")));
            }
        }
    }

    fn check_file(
        meta: &MetaDb<'_>,
        idx: Option<profcodec_hpctoolkit::read::FileIndex>,
        y: &Value,
    ) {
        match idx {
            None => assert!(un(y).is_null(), "file: expected {y:?}"),
            Some(i) => {
                let file = meta.file(i).expect("file");
                assert_eq!(file.path, s(get(y, "path")));
                assert_eq!(
                    names_of_bits(file.flags.into(), &["copied"]),
                    flags(get(y, "flags"))
                );
            }
        }
    }

    fn check_function(
        meta: &MetaDb<'_>,
        idx: Option<profcodec_hpctoolkit::read::FunctionIndex>,
        y: &Value,
    ) {
        match idx {
            None => assert!(un(y).is_null(), "function: expected {y:?}"),
            Some(i) => {
                let func = meta.function(i).expect("function");
                match func.name {
                    Some(n) => assert_eq!(n, s(get(y, "name"))),
                    None => assert!(get(y, "name").is_null()),
                }
                check_module(meta, func.module, get(y, "module"));
                check_file(meta, func.file, get(y, "file"));
                assert_eq!(func.offset, u(get(y, "offset")));
                assert_eq!(u64::from(func.line), u(get(y, "line")));
                assert_eq!(
                    names_of_bits(func.flags.into(), &[]),
                    flags(get(y, "flags"))
                );
            }
        }
    }

    fn opt_u64(v: &Value) -> Option<u64> {
        (!un(v).is_null()).then(|| u(v))
    }

    /// Compares a `children` list recursively; returns the number of contexts compared.
    fn check_children(
        meta: &MetaDb<'_>,
        children: profcodec_hpctoolkit::read::ContextChildren,
        y: &Value,
    ) -> usize {
        let ours: Vec<_> = meta
            .children(children)
            .map(|c| c.expect("context"))
            .collect();
        let theirs = seq(y);
        assert_eq!(ours.len(), theirs.len(), "number of children");
        let mut n = 0;
        for (c, y) in ours.iter().zip(theirs) {
            assert_eq!(u64::from(c.ctx_id), u(get(y, "ctx_id")));
            assert_eq!(
                names_of_bits(c.flags.into(), &["has_function", "has_srcloc", "has_point"]),
                flags(get(y, "flags")),
                "flags of ctx {}",
                c.ctx_id
            );
            let relation = c.relation.name().unwrap_or("other");
            assert_eq!(relation, s(get(y, "relation")));
            let lexical = c.lexical_type.name().unwrap_or("other");
            assert_eq!(lexical, s(get(y, "lexical_type")));
            assert_eq!(u64::from(c.propagation), u(get(y, "propagation")));
            check_function(meta, c.function, get(y, "function"));
            check_file(meta, c.file, get(y, "file"));
            assert_eq!(c.line.map(u64::from), opt_u64(get(y, "line")));
            check_module(meta, c.module, get(y, "module"));
            assert_eq!(c.module_offset, opt_u64(get(y, "offset")));
            n += 1 + check_children(meta, c.children, get(y, "children"));
        }
        n
    }

    fn check_meta(meta: &MetaDb<'_>, y: &Value) {
        let g = get(y, "general");
        assert_eq!(meta.title().expect("title"), s(get(g, "title")));
        assert_eq!(
            meta.description().expect("description"),
            s(get(g, "description"))
        );

        let names: Vec<&str> = meta.id_names().map(|n| n.expect("id name")).collect();
        let y_names: Vec<&str> = seq(get(get(y, "id_names"), "names"))
            .iter()
            .map(s)
            .collect();
        assert_eq!(names, y_names);

        let ym = get(y, "metrics");
        let scopes = seq(get(ym, "scopes"));
        assert_eq!(usize::from(meta.scope_count()), scopes.len());
        for (i, ys) in scopes.iter().enumerate() {
            check_scope(meta, ScopeIndex(i as u16), ys);
        }
        let metrics = seq(get(ym, "metrics"));
        assert_eq!(meta.metric_count() as usize, metrics.len());
        for (m, ymd) in meta.metrics().zip(metrics) {
            let m = m.expect("metric");
            assert_eq!(m.name, s(get(ymd, "name")));
            let insts: Vec<_> = meta
                .scope_instances(&m)
                .map(|x| x.expect("scope instance"))
                .collect();
            let yi = seq(get(ymd, "scope_insts"));
            assert_eq!(insts.len(), yi.len());
            for (i, yi) in insts.iter().zip(yi) {
                check_scope(meta, i.scope, get(yi, "scope"));
                assert_eq!(u64::from(i.prop_metric_id), u(get(yi, "prop_metric_id")));
            }
            let sums: Vec<_> = meta.summaries(&m).map(|x| x.expect("summary")).collect();
            let ys = seq(get(ymd, "summaries"));
            assert_eq!(sums.len(), ys.len());
            for (su, ys) in sums.iter().zip(ys) {
                check_scope(meta, su.scope, get(ys, "scope"));
                assert_eq!(su.formula, s(get(ys, "formula")));
                let combine = su.combine.name().unwrap_or("other");
                assert_eq!(combine, s(get(ys, "combine")));
                assert_eq!(u64::from(su.stat_metric_id), u(get(ys, "stat_metric_id")));
            }
        }

        let modules = seq(get(get(y, "modules"), "modules"));
        assert_eq!(meta.module_count() as usize, modules.len());
        for (m, ym) in meta.modules().zip(modules) {
            check_module(meta, Some(m.expect("module").index), ym);
        }
        let files = seq(get(get(y, "files"), "files"));
        assert_eq!(meta.file_count() as usize, files.len());
        for (fl, yf) in meta.files().zip(files) {
            check_file(meta, Some(fl.expect("file").index), yf);
        }
        let functions = seq(get(get(y, "functions"), "functions"));
        assert_eq!(meta.function_count() as usize, functions.len());
        for (fu, yf) in meta.functions().zip(functions) {
            check_function(meta, Some(fu.expect("function").index), yf);
        }

        let eps = seq(get(get(y, "context"), "entry_points"));
        assert_eq!(usize::from(meta.entry_point_count()), eps.len());
        let mut contexts = 0;
        for (e, ye) in meta.entry_points().zip(eps) {
            let e = e.expect("entry point");
            assert_eq!(u64::from(e.ctx_id), u(get(ye, "ctx_id")));
            let kind = e.kind.name().unwrap_or("other");
            assert_eq!(kind, s(get(ye, "entry_point")));
            assert_eq!(e.pretty_name, s(get(ye, "pretty_name")));
            contexts += 1 + check_children(meta, e.children, get(ye, "children"));
        }
        // The tree walk meets exactly the nodes the dump lists.
        assert_eq!(meta.walk().count(), contexts);
    }

    type Plane = BTreeMap<u64, BTreeMap<u64, f64>>;

    fn plane(y: &Value) -> Plane {
        let mut out = Plane::new();
        if let Value::Mapping(m) = un(y) {
            for (k, inner) in m {
                let row = out.entry(u(k)).or_default();
                if let Value::Mapping(im) = un(inner) {
                    for (k2, v) in im {
                        row.insert(u(k2), f(v));
                    }
                }
            }
        }
        out
    }

    fn check(db_dir: &str, yaml: &str) {
        let Some(root) = super::corpus() else { return };
        let dbase = root.join("dbase");
        let text = std::fs::read_to_string(dbase.join(yaml)).expect("golden yaml");
        let y: Value = serde_yaml_ng::from_str(&text).expect("yaml parses");
        let db = Database::open(dbase.join(db_dir)).expect("database opens");
        db.validate().expect("validates");
        let meta = db.meta();
        check_meta(&meta, get(&y, "meta"));

        // profile.db: identifier tuples, flags and every value.
        let pdb = db.profile().expect("profile.db");
        let yp = seq(get(get(get(&y, "profile"), "profile_infos"), "profiles"));
        assert_eq!(pdb.profile_count() as usize, yp.len());
        for (p, yp) in pdb.profiles().zip(yp) {
            let p = p.expect("profile");
            assert_eq!(
                names_of_bits(p.flags.into(), &["is_summary"]),
                flags(get(yp, "flags"))
            );
            let yt = get(yp, "id_tuple");
            match p.id_tuple {
                None => assert!(yt.is_null()),
                Some(t) => {
                    let ids = seq(get(yt, "ids"));
                    assert_eq!(t.ids.len(), ids.len());
                    for (id, yid) in t.ids.iter().zip(ids) {
                        assert_eq!(u64::from(id.kind), u(get(yid, "kind")));
                        assert_eq!(
                            names_of_bits(id.flags.get().into(), &["is_physical"]),
                            flags(get(yid, "flags"))
                        );
                        assert_eq!(u64::from(id.logical_id.get()), u(get(yid, "logical_id")));
                        assert_eq!(id.physical_id.get(), u(get(yid, "physical_id")));
                    }
                }
            }
            let mut ours = Plane::new();
            for (ctx, vals) in p.contexts() {
                let row = ours.entry(ctx.into()).or_default();
                for v in vals {
                    row.insert(v.metric_id().into(), v.value());
                }
                // Point lookups agree with the iteration.
                for v in vals {
                    assert_eq!(p.value(ctx, v.metric_id()), Some(v.value()));
                    assert_eq!(
                        db.value(p.index, ctx, v.metric_id()).expect("lookup"),
                        Some(v.value())
                    );
                }
            }
            assert_eq!(
                ours,
                plane(get(yp, "values")),
                "values of profile {}",
                p.index
            );
        }

        // cct.db: every context's values, by metric then profile.
        let cdb = db.cct().expect("cct.db");
        let yc = seq(get(get(get(&y, "context"), "ctx_infos"), "contexts"));
        assert_eq!(cdb.context_count() as usize, yc.len());
        for (c, yc) in cdb.contexts().zip(yc) {
            let c = c.expect("context values");
            let mut ours = Plane::new();
            for (metric, vals) in c.metrics() {
                let row = ours.entry(metric.into()).or_default();
                for v in vals {
                    row.insert(v.prof_index().into(), v.value());
                    assert_eq!(c.value(v.prof_index(), metric), Some(v.value()));
                }
            }
            assert_eq!(ours, plane(get(yc, "values")), "values of ctx {}", c.ctx_id);
        }

        // trace.db: range, headers and every element.
        let tdb = db.trace().expect("trace.db");
        let yt = get(get(&y, "trace"), "ctx_traces");
        let range = get(yt, "timestamp_range");
        assert_eq!(tdb.min_timestamp(), u(get(range, "min")));
        assert_eq!(tdb.max_timestamp(), u(get(range, "max")));
        let traces = seq(get(yt, "traces"));
        assert_eq!(tdb.trace_count() as usize, traces.len());
        for (t, ytr) in tdb.traces().zip(traces) {
            let t = t.expect("trace");
            assert_eq!(u64::from(t.prof_index), u(get(ytr, "prof_index")));
            let line = seq(get(ytr, "line"));
            assert_eq!(t.elems.len(), line.len());
            for (e, ye) in t.elems.iter().zip(line) {
                assert_eq!(e.timestamp(), u(get(ye, "timestamp")));
                assert_eq!(u64::from(e.ctx_id()), u(get(ye, "ctx_id")));
                assert_eq!(
                    t.at_or_before(e.timestamp()).map(|x| x.timestamp()),
                    Some(e.timestamp())
                );
            }
        }

        // Cross-links: every ctxId of the dump's tree resolves through the database.
        for node in meta.walk() {
            let node = node.expect("node");
            let found = db
                .context(node.node.ctx_id())
                .expect("listed")
                .expect("decodes");
            assert_eq!(found, node.node);
            if let ContextNode::Context(_) = node.node {
                assert_eq!(
                    db.context_index().parent(node.node.ctx_id()),
                    Some(node.parent)
                );
            }
        }
    }

    #[test]
    fn small_matches_golden_yaml() {
        check("small.d", "small.yaml");
    }

    #[test]
    fn small_nostruct_matches_golden_yaml() {
        check("small.nostruct.d", "small.nostruct.yaml");
    }
}

/// Identifier tuples display as hpctesttool prints them (`NODE 0 / CORE 0 / THREAD 0`).
#[test]
fn id_tuples_display_their_kinds() {
    let Some(root) = corpus() else { return };
    let db = Database::open(root.join("dbase/small.d")).expect("small.d");
    let tuple = db.id_tuple(1).expect("profile 1").expect("a tuple");
    assert_eq!(tuple.to_string(), "NODE 0 / CORE 0 / THREAD 0");
}
