//! The public API of the five format crates and the umbrella, held against the listings
//! committed in `xtask/api/<crate>.txt`, so that no change to it goes unnoticed; and each
//! format crate's first example, the same in its README and its crate docs.
//!
//! A listing is made from rustdoc's JSON output (unstable, so `RUSTC_BOOTSTRAP=1` lets the
//! stable toolchain write it; rustdoc's JSON needs no installed tool), one line per public item
//! as the crate's users reach it: its path, kind and signature, fields and variants, inherent
//! methods and implemented traits, with the default features. A change that is meant is
//! recorded by writing the listings again:
//! `cargo test -p xtask -- --ignored write_public_api_listings`.

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{Workspace, run};

/// The crates whose public API is held: the five format crates and the umbrella.
const CRATES: &[&str] = &[
    "profcodec-hpctoolkit",
    "profcodec-hpcrun",
    "profcodec-nytprof",
    "profcodec-easyprofiler",
    "profcodec-statprofiler",
    "profcodec",
];

/// The format crates whose README opens with the crate docs' first example.
const FORMAT_CRATES: &[&str] = &[
    "hpctoolkit",
    "hpcrun",
    "nytprof",
    "easyprofiler",
    "statprofiler",
];

/// Checks every crate's public API against its committed listing and every format crate's
/// first example against its README's.
pub(crate) fn check(ws: &Workspace) -> Result<()> {
    check_first_examples(ws)?;
    let mut changed = Vec::new();
    for krate in CRATES {
        let listing = listing(ws, krate)?;
        let path = listing_path(ws, krate);
        let Ok(committed) = std::fs::read_to_string(&path) else {
            // A crate without a listing yet (a new crate): its first one is written, to commit.
            std::fs::create_dir_all(ws.root.join("xtask/api"))?;
            std::fs::write(&path, &listing)?;
            eprintln!("xtask: wrote {} (new: commit it)", path.display());
            continue;
        };
        if committed != listing {
            eprintln!(
                "xtask: the public API of {krate} differs from {}:",
                path.display()
            );
            print_difference(&committed, &listing);
            changed.push(*krate);
        }
    }
    if !changed.is_empty() {
        bail!(
            "the public API of {} changed; if that is meant, record it with \
             `cargo test -p xtask -- --ignored write_public_api_listings` and commit xtask/api/",
            changed.join(", ")
        );
    }
    Ok(())
}

/// `xtask/api/<crate>.txt`.
fn listing_path(ws: &Workspace, krate: &str) -> PathBuf {
    ws.root.join("xtask/api").join(format!("{krate}.txt"))
}

/// The lines only one side has, `-` for the committed listing's, `+` for the crate's.
fn print_difference(committed: &str, now: &str) {
    let old: BTreeSet<&str> = committed.lines().collect();
    let new: BTreeSet<&str> = now.lines().collect();
    for line in old.difference(&new) {
        eprintln!("  - {line}");
    }
    for line in new.difference(&old) {
        eprintln!("  + {line}");
    }
}

/// The public API of `krate` as sorted lines.
fn listing(ws: &Workspace, krate: &str) -> Result<String> {
    // A target folder of its own: the unstable flag must not change how the test builds'
    // dependencies are fingerprinted. It is kept between runs, so only changed crates are
    // documented again.
    let target = ws.target().join("api");
    run(ws
        .cargo(&["rustdoc", "--quiet", "--lib", "-p", krate, "--target-dir"])
        .arg(&target)
        .args(["--", "-Z", "unstable-options", "--output-format", "json"])
        .env("RUSTC_BOOTSTRAP", "1"))?;
    let file = target
        .join("doc")
        .join(format!("{}.json", krate.replace('-', "_")));
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let doc: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    let mut lister = Lister {
        index: &doc["index"],
        lines: BTreeSet::new(),
        visited: HashSet::new(),
    };
    let root = id_key(&doc["root"]);
    lister.item(&root, &krate.replace('-', "_"));
    let mut out = String::new();
    for line in lister.lines {
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// An item id as the index's key.
fn id_key(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Walks the public items from the crate root and writes one line per item.
struct Lister<'a> {
    index: &'a Value,
    lines: BTreeSet<String>,
    /// (item, path) pairs met, so that a module re-exported into itself ends.
    visited: HashSet<(String, String)>,
}

impl Lister<'_> {
    fn item(&mut self, id: &str, path: &str) {
        if !self.visited.insert((id.to_owned(), path.to_owned())) {
            return;
        }
        let item = &self.index[id];
        let Some((kind, inner)) = item["inner"].as_object().and_then(|o| o.iter().next()) else {
            if let Some(kind) = item["inner"].as_str() {
                self.lines.insert(format!("{kind} {path}"));
            }
            return;
        };
        match kind.as_str() {
            "module" => {
                for child in inner["items"].as_array().into_iter().flatten() {
                    let child_id = id_key(child);
                    let child_item = &self.index[child_id.as_str()];
                    if !is_public(child_item) {
                        continue;
                    }
                    self.child(&child_id, child_item, path);
                }
            }
            "struct" | "union" => {
                let generics = generics(&inner["generics"]);
                let sk = &inner["kind"];
                let mut private = "";
                if let Some(plain) = sk.get("plain") {
                    for field in plain["fields"].as_array().into_iter().flatten() {
                        self.field(&id_key(field), path);
                    }
                    if plain["has_stripped_fields"].as_bool() == Some(true) {
                        private = " (private fields)";
                    }
                } else if let Some(tuple) = sk.get("tuple") {
                    for (i, field) in tuple.as_array().into_iter().flatten().enumerate() {
                        if field.is_null() {
                            private = " (private fields)";
                        } else {
                            let f = &self.index[id_key(field).as_str()];
                            let ty = render_type(&f["inner"]["struct_field"]);
                            self.lines.insert(format!("field {path}.{i}: {ty}"));
                        }
                    }
                }
                self.lines
                    .insert(format!("{kind} {path}{generics}{private}"));
                self.impls(&inner["impls"], path);
            }
            "enum" => {
                self.lines
                    .insert(format!("enum {path}{}", generics(&inner["generics"])));
                for variant in inner["variants"].as_array().into_iter().flatten() {
                    let v = &self.index[id_key(variant).as_str()];
                    let name = v["name"].as_str().unwrap_or("?");
                    let shape = render_variant(self.index, &v["inner"]["variant"]["kind"]);
                    self.lines.insert(format!("variant {path}::{name}{shape}"));
                }
                self.impls(&inner["impls"], path);
            }
            "function" => {
                self.lines.insert(format!("fn {path}{}", signature(inner)));
            }
            "trait" => {
                self.lines
                    .insert(format!("trait {path}{}", generics(&inner["generics"])));
                for member in inner["items"].as_array().into_iter().flatten() {
                    let m = &self.index[id_key(member).as_str()];
                    let name = m["name"].as_str().unwrap_or("?");
                    self.member(m, &format!("{path}::{name}"));
                }
            }
            "constant" => {
                let ty = render_type(&inner["type"]);
                self.lines.insert(format!("const {path}: {ty}"));
            }
            "static" => {
                let ty = render_type(&inner["type"]);
                self.lines.insert(format!("static {path}: {ty}"));
            }
            "type_alias" => {
                let ty = render_type(&inner["type"]);
                self.lines.insert(format!(
                    "type {path}{} = {ty}",
                    generics(&inner["generics"])
                ));
            }
            "macro" | "proc_macro" => {
                self.lines.insert(format!("macro {path}"));
            }
            other => {
                self.lines.insert(format!("{other} {path}"));
            }
        }
    }

    /// A child of a module: a re-export is listed where it is reachable.
    fn child(&mut self, id: &str, item: &Value, path: &str) {
        if let Some(using) = item["inner"].get("use") {
            let source = using["source"].as_str().unwrap_or("?");
            let name = using["name"].as_str().unwrap_or("?");
            let target = using.get("id").map(id_key).unwrap_or_default();
            if using["is_glob"].as_bool() == Some(true) {
                if self.index.get(target.as_str()).is_some() {
                    // A glob of a module of this crate: its items, as if they were here.
                    let module = &self.index[target.as_str()];
                    for child in module["inner"]["module"]["items"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        let child_id = id_key(child);
                        let child_item = &self.index[child_id.as_str()];
                        if is_public(child_item) {
                            self.child(&child_id, child_item, path);
                        }
                    }
                } else {
                    self.lines.insert(format!("use {path}::* = {source}::*"));
                }
                return;
            }
            if self.index.get(target.as_str()).is_some() {
                self.item(&target, &format!("{path}::{name}"));
            } else {
                // An item of another crate, re-exported.
                self.lines.insert(format!("use {path}::{name} = {source}"));
            }
            return;
        }
        let name = item["name"].as_str().unwrap_or("?");
        self.item(id, &format!("{path}::{name}"));
    }

    fn field(&mut self, id: &str, path: &str) {
        let f = &self.index[id];
        if !is_public(f) {
            return;
        }
        let name = f["name"].as_str().unwrap_or("?");
        let ty = render_type(&f["inner"]["struct_field"]);
        self.lines.insert(format!("field {path}.{name}: {ty}"));
    }

    /// The inherent methods and the implemented traits of a type (auto traits and blanket
    /// implementations left out: they follow from the fields).
    fn impls(&mut self, impls: &Value, path: &str) {
        for imp in impls.as_array().into_iter().flatten() {
            let imp = &self.index[id_key(imp).as_str()]["inner"]["impl"];
            if imp["is_synthetic"].as_bool() == Some(true) || !imp["blanket_impl"].is_null() {
                continue;
            }
            if let Some(tr) = imp.get("trait").filter(|t| !t.is_null()) {
                let not = if imp["is_negative"].as_bool() == Some(true) {
                    "!"
                } else {
                    ""
                };
                self.lines
                    .insert(format!("impl {not}{} for {path}", render_path(tr)));
                continue;
            }
            for member in imp["items"].as_array().into_iter().flatten() {
                let m = &self.index[id_key(member).as_str()];
                if !is_public(m) {
                    continue;
                }
                let name = m["name"].as_str().unwrap_or("?");
                self.member(m, &format!("{path}::{name}"));
            }
        }
    }

    /// A method, associated constant or associated type.
    fn member(&mut self, m: &Value, path: &str) {
        let Some((kind, inner)) = m["inner"].as_object().and_then(|o| o.iter().next()) else {
            return;
        };
        let line = match kind.as_str() {
            "function" => format!("fn {path}{}", signature(inner)),
            "assoc_const" => format!("const {path}: {}", render_type(&inner["type"])),
            "constant" => format!("const {path}: {}", render_type(&inner["type"])),
            "assoc_type" => format!("type {path}"),
            other => format!("{other} {path}"),
        };
        self.lines.insert(line);
    }
}

fn is_public(item: &Value) -> bool {
    // Trait implementations' members are "default"; the items of the API are "public".
    matches!(item["visibility"].as_str(), Some("public"))
}

/// `<T, 'a>`: the parameters' names (bounds left out).
fn generics(g: &Value) -> String {
    let names: Vec<String> = g["params"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            // Parameters of `impl Trait` arguments are the compiler's, not the author's.
            p["kind"]["type"]["is_synthetic"].as_bool() != Some(true)
        })
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("<{}>", names.join(", "))
    }
}

/// `<T>(self: &Self, id: u16) -> Option<X>`.
fn signature(f: &Value) -> String {
    let sig = &f["sig"];
    let inputs: Vec<String> = sig["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|pair| {
            let name = pair[0].as_str().unwrap_or("_");
            format!("{name}: {}", render_type(&pair[1]))
        })
        .collect();
    let output = match &sig["output"] {
        Value::Null => String::new(),
        ty => format!(" -> {}", render_type(ty)),
    };
    let header = &f["header"];
    let mut prefix = String::new();
    if header["is_const"].as_bool() == Some(true) {
        prefix.push_str("const ");
    }
    if header["is_unsafe"].as_bool() == Some(true) {
        prefix.push_str("unsafe ");
    }
    format!(
        "{}{}({}){output}",
        if prefix.is_empty() {
            String::new()
        } else {
            format!(" [{}]", prefix.trim_end())
        },
        generics(&f["generics"]),
        inputs.join(", ")
    )
}

fn render_variant(index: &Value, kind: &Value) -> String {
    let field_type = |id: &Value| render_type(&index[id_key(id).as_str()]["inner"]["struct_field"]);
    if let Some(tuple) = kind.get("tuple") {
        let fields: Vec<String> = tuple
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                if f.is_null() {
                    "_".to_owned()
                } else {
                    field_type(f)
                }
            })
            .collect();
        format!("({})", fields.join(", "))
    } else if let Some(st) = kind.get("struct") {
        let fields: Vec<String> = st["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                let name = index[id_key(f).as_str()]["name"].as_str().unwrap_or("?");
                format!("{name}: {}", field_type(f))
            })
            .collect();
        format!(" {{ {} }}", fields.join(", "))
    } else {
        String::new()
    }
}

/// A path with its generic arguments: `Option<MetricRef>`.
fn render_path(p: &Value) -> String {
    let name = p["path"].as_str().or(p["name"].as_str()).unwrap_or("?");
    format!("{name}{}", render_args(&p["args"]))
}

fn render_args(args: &Value) -> String {
    if let Some(angle) = args.get("angle_bracketed") {
        let mut parts: Vec<String> = angle["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                if let Some(t) = a.get("type") {
                    render_type(t)
                } else if let Some(l) = a.get("lifetime").and_then(Value::as_str) {
                    l.to_owned()
                } else if let Some(c) = a.get("const") {
                    c["expr"].as_str().unwrap_or("_").to_owned()
                } else {
                    "_".to_owned()
                }
            })
            .collect();
        for c in angle["constraints"].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or("?");
            match c["binding"].get("equality") {
                Some(eq) => parts.push(format!("{name} = {}", render_term(eq))),
                None => parts.push(format!("{name}: ..")),
            }
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("<{}>", parts.join(", "))
        }
    } else if let Some(paren) = args.get("parenthesized") {
        let inputs: Vec<String> = paren["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(render_type)
            .collect();
        let output = match &paren["output"] {
            Value::Null => String::new(),
            ty => format!(" -> {}", render_type(ty)),
        };
        format!("({}){output}", inputs.join(", "))
    } else {
        String::new()
    }
}

fn render_term(t: &Value) -> String {
    match t.get("type") {
        Some(ty) => render_type(ty),
        None => t.to_string(),
    }
}

fn render_bounds(bounds: &Value) -> String {
    let parts: Vec<String> = bounds
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            if let Some(tb) = b.get("trait_bound") {
                render_path(&tb["trait"])
            } else if let Some(l) = b.get("outlives").and_then(Value::as_str) {
                l.to_owned()
            } else {
                "_".to_owned()
            }
        })
        .collect();
    parts.join(" + ")
}

/// A type as Rust spells it (anything this does not know as rustdoc's JSON without ids).
fn render_type(t: &Value) -> String {
    let Some((kind, v)) = t.as_object().and_then(|o| o.iter().next()) else {
        return t.as_str().map_or_else(|| t.to_string(), str::to_owned);
    };
    match kind.as_str() {
        "resolved_path" => render_path(v),
        "primitive" | "generic" => v.as_str().unwrap_or("?").to_owned(),
        "borrowed_ref" => {
            let lifetime = v["lifetime"]
                .as_str()
                .map_or(String::new(), |l| format!("{l} "));
            let m = if v["is_mutable"].as_bool() == Some(true) {
                "mut "
            } else {
                ""
            };
            format!("&{lifetime}{m}{}", render_type(&v["type"]))
        }
        "raw_pointer" => {
            let m = if v["is_mutable"].as_bool() == Some(true) {
                "mut"
            } else {
                "const"
            };
            format!("*{m} {}", render_type(&v["type"]))
        }
        "slice" => format!("[{}]", render_type(v)),
        "array" => format!(
            "[{}; {}]",
            render_type(&v["type"]),
            v["len"].as_str().unwrap_or("_")
        ),
        "tuple" => {
            let parts: Vec<String> = v
                .as_array()
                .into_iter()
                .flatten()
                .map(render_type)
                .collect();
            format!("({})", parts.join(", "))
        }
        "impl_trait" => format!("impl {}", render_bounds(v)),
        "dyn_trait" => {
            let traits: Vec<String> = v["traits"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| render_path(&p["trait"]))
                .collect();
            let lifetime = v["lifetime"]
                .as_str()
                .map_or(String::new(), |l| format!(" + {l}"));
            format!("dyn {}{lifetime}", traits.join(" + "))
        }
        "qualified_path" => {
            let name = v["name"].as_str().unwrap_or("?");
            let self_type = render_type(&v["self_type"]);
            match v.get("trait").filter(|t| !t.is_null()) {
                Some(tr) => format!("<{self_type} as {}>::{name}", render_path(tr)),
                None => format!("{self_type}::{name}"),
            }
        }
        "function_pointer" => {
            let inputs: Vec<String> = v["sig"]["inputs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|pair| render_type(&pair[1]))
                .collect();
            let output = match &v["sig"]["output"] {
                Value::Null => String::new(),
                ty => format!(" -> {}", render_type(ty)),
            };
            format!("fn({}){output}", inputs.join(", "))
        }
        _ => without_ids(t).to_string(),
    }
}

/// rustdoc's JSON of a type without the item ids (which change between builds).
fn without_ids(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "id")
                .map(|(k, v)| (k.clone(), without_ids(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_ids).collect()),
        other => other.clone(),
    }
}

/// Each format crate's README opens with the first example of its crate docs, the same text,
/// so that docs.rs and the repository show a newcomer the same first program.
fn check_first_examples(ws: &Workspace) -> Result<()> {
    for name in FORMAT_CRATES {
        let dir = ws.root.join("crates").join(name);
        let readme = std::fs::read_to_string(dir.join("README.md"))?;
        let lib = std::fs::read_to_string(dir.join("src/lib.rs"))?;
        let docs: String = lib
            .lines()
            .filter_map(|l| l.strip_prefix("//!"))
            .map(|l| format!("{}\n", l.strip_prefix(' ').unwrap_or(l)))
            .collect();
        let (Some(in_readme), Some(in_docs)) = (first_example(&readme), first_example(&docs))
        else {
            bail!("crates/{name}: README.md or the crate docs of src/lib.rs has no example");
        };
        if in_readme != in_docs {
            bail!(
                "crates/{name}: the README's first example is not the crate docs' first \
                 example (src/lib.rs); keep them the same text\n--- README.md\n{in_readme}\n\
                 --- src/lib.rs\n{in_docs}"
            );
        }
    }
    Ok(())
}

/// The body of the first fenced Rust code block of a Markdown text.
fn first_example(markdown: &str) -> Option<String> {
    let mut lines = markdown.lines();
    lines.find(|l| matches!(l.trim_end(), "```" | "```rust"))?;
    let body: Vec<&str> = lines.take_while(|l| l.trim_end() != "```").collect();
    Some(body.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the public API as it is now: run when a change to it is meant.
    #[test]
    #[ignore = "writes xtask/api/: run by hand when the public API changes on purpose"]
    fn write_public_api_listings() -> Result<()> {
        let ws = Workspace::find()?;
        std::fs::create_dir_all(ws.root.join("xtask/api"))?;
        for krate in CRATES {
            std::fs::write(listing_path(&ws, krate), listing(&ws, krate)?)?;
        }
        Ok(())
    }

    #[test]
    fn the_first_example_of_a_markdown_text() {
        let md = "# t\n\ntext\n\n```rust\nlet a = 1;\n# Ok(())\n```\n\n```\nsecond\n```\n";
        assert_eq!(first_example(md).as_deref(), Some("let a = 1;\n# Ok(())"));
        assert_eq!(first_example("no code"), None);
    }
}
