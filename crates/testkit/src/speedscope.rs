//! The real speedscope app in headless Chromium, for tests that check that an output loads in
//! it (speedscope's own JSON format, or any format speedscope imports, such as Chrome's trace
//! event JSON or folded stacks).
//!
//! `cargo xtask test` installs the npm package `speedscope` (which ships the app as static
//! files beside its `file-format-schema.json`) and Debian's `chromium`, and names them in
//! `PROFCODEC_SPEEDSCOPE` (the package's `dist/release` folder) and `PROFCODEC_CHROMIUM`.
//! [`Speedscope::from_env`] is `None` when they are unset (a test run outside the xtask), after
//! printing that the check was not run.
//!
//! [`Speedscope::load`] serves the app and the profile on 127.0.0.1 from a thread of the test,
//! opens `index.html#profileURL=...` in headless Chromium (software WebGL), and returns the page
//! as rendered: its title (speedscope names the page after the profile it imported), its DOM,
//! and a screenshot. A speedscope JSON file is named by its `name` field; a file of another
//! format (Chrome trace JSON, folded stacks) by the URL it was served from, [`IMPORTED_NAME`].
//! [`Speedscope::load_page`] serves any folder and opens one page of it (a report).
//!
//! No load can hang a test. Headless Chromium now and then never exits after it printed the
//! DOM or wrote the screenshot (its helper processes keep running, and a caller that waits for
//! the end of its output pipe waits for them too), or never settles when a request of the page
//! is never answered. So Chromium writes into files, never pipes, in a process group of its
//! own; its result is taken as soon as it is complete, then the whole group is killed; and
//! a load that has not completed within [`LOAD_TIMEOUT`] is killed and fails with a message.
//! The server answers each connection on a thread of its own with read and write timeouts, so
//! that a connection the browser opened ahead and never used holds up nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The longest one Chromium run may take before it is killed and the load fails.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a Chromium whose result is complete may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long a connection to the server may stay silent.
const IDLE_CONNECTION: Duration = Duration::from_secs(5);

/// The name speedscope gives a profile of a format without a name of its own (Chrome trace
/// JSON, folded stacks): the last segment of the URL it is served from.
pub const IMPORTED_NAME: &str = "profile";

/// The speedscope app folder and the Chromium binary.
#[derive(Debug, Clone)]
pub struct Speedscope {
    /// The app: `index.html`, its scripts, and `file-format-schema.json`.
    pub app: PathBuf,
    /// The Chromium binary.
    pub chromium: PathBuf,
}

/// The page after speedscope loaded a profile.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The page's title: `NAME - speedscope` once a profile named NAME is shown.
    pub title: String,
    /// The DOM after loading.
    pub dom: String,
    /// A screenshot of the page (PNG).
    pub screenshot: PathBuf,
}

impl Rendered {
    /// Whether speedscope shows the profile `name`: the title names it and no error is shown.
    pub fn shows(&self, name: &str) -> bool {
        self.title == format!("{name} - speedscope")
            && !self.dom.contains("Something went wrong")
            && !self.dom.contains("Unrecognized format")
    }
}

impl Speedscope {
    /// The app and browser named by `PROFCODEC_SPEEDSCOPE` and `PROFCODEC_CHROMIUM`, or `None`
    /// (after printing that the speedscope check was not run) when either is unset.
    pub fn from_env() -> Option<Speedscope> {
        let (Some(app), Some(chromium)) = (
            std::env::var_os("PROFCODEC_SPEEDSCOPE"),
            std::env::var_os("PROFCODEC_CHROMIUM"),
        ) else {
            println!(
                "speedscope check not run: PROFCODEC_SPEEDSCOPE and PROFCODEC_CHROMIUM are set by \
                 `cargo xtask test`"
            );
            return None;
        };
        Some(Speedscope {
            app: PathBuf::from(app),
            chromium: PathBuf::from(chromium),
        })
    }

    /// speedscope's JSON schema of its file format.
    pub fn schema(&self) -> PathBuf {
        self.app.join("file-format-schema.json")
    }

    /// Loads `profile` into the app in headless Chromium; `work` is a folder for the browser's
    /// profile and the screenshot (`speedscope.png`).
    pub fn load(&self, profile: &Path, work: &Path) -> Result<Rendered, String> {
        let server = Server::start(self.app.clone(), Some(profile.to_path_buf()))
            .map_err(|e| format!("serving on 127.0.0.1: {e}"))?;
        let base = format!("http://127.0.0.1:{}", server.port);
        let url = format!("{base}/index.html#profileURL={base}/{IMPORTED_NAME}");
        self.render(&url, work, "speedscope.png")
    }

    /// Opens the page `page` of the folder `folder`, served from 127.0.0.1 (without the app),
    /// in headless Chromium; `work` is a folder for the browser's profiles and the screenshot
    /// (`page.png`).
    pub fn load_page(
        folder: &Path,
        page: &str,
        chromium: &Path,
        work: &Path,
    ) -> Result<Rendered, String> {
        let harness = Speedscope {
            app: folder.to_path_buf(),
            chromium: chromium.to_path_buf(),
        };
        let server = Server::start(folder.to_path_buf(), None)
            .map_err(|e| format!("serving on 127.0.0.1: {e}"))?;
        let url = format!("http://127.0.0.1:{}/{page}", server.port);
        harness.render(&url, work, "page.png")
    }

    /// The DOM, title and screenshot of `url` (while its server runs).
    fn render(&self, url: &str, work: &Path, screenshot: &str) -> Result<Rendered, String> {
        let dom_file = work.join("dom.html");
        let mut dom = String::new();
        // A DOM without a title is a page that never loaded: seen once under heavy load, not
        // understood, so it is loaded once more, and its first attempt's words are printed.
        for attempt in 1..=2 {
            run_chromium(
                &self.chromium,
                url,
                work,
                "dom",
                &["--dump-dom"],
                &dom_complete,
                LOAD_TIMEOUT,
            )?;
            std::fs::rename(work.join("dom.out"), &dom_file)
                .map_err(|e| format!("{}: {e}", dom_file.display()))?;
            dom = std::fs::read_to_string(&dom_file)
                .map_err(|e| format!("{}: {e}", dom_file.display()))?;
            if !title_of(&dom).is_empty() || attempt == 2 {
                break;
            }
            println!(
                "chromium gave a page without a title for {url} ({:.200}); its stderr: {}; \
                 loading it again",
                dom,
                std::fs::read_to_string(work.join("dom.err")).unwrap_or_default()
            );
        }
        let screenshot = work.join(screenshot);
        let shot = format!("--screenshot={}", screenshot.display());
        run_chromium(
            &self.chromium,
            url,
            work,
            "screenshot",
            &[&shot],
            &screenshot_complete,
            LOAD_TIMEOUT,
        )?;
        let title = title_of(&dom);
        Ok(Rendered {
            title,
            dom,
            screenshot,
        })
    }
}

/// The title of a page's DOM (empty without one).
fn title_of(dom: &str) -> String {
    dom.split_once("<title>")
        .and_then(|(_, rest)| rest.split_once("</title>"))
        .map(|(t, _)| t.replace("&amp;", "&"))
        .unwrap_or_default()
}

/// Whether Chromium printed the whole DOM.
fn dom_complete(_err: &Path, out: &Path) -> bool {
    std::fs::read_to_string(out).is_ok_and(|dom| dom.trim_end().ends_with("</html>"))
}

/// Whether Chromium said it wrote the screenshot.
fn screenshot_complete(err: &Path, _out: &Path) -> bool {
    std::fs::read_to_string(err).is_ok_and(|e| e.contains("bytes written to file"))
}

/// Runs headless Chromium on `url` with `extra` arguments, its standard output and error in
/// `work/<name>.out` and `work/<name>.err`, until it exits, or until `done(err, out)` says its
/// result is complete (and it had [`EXIT_GRACE`] to exit), or until `timeout` (an error). Its
/// whole process group is killed in the end.
fn run_chromium(
    chromium: &Path,
    url: &str,
    work: &Path,
    name: &str,
    extra: &[&str],
    done: &dyn Fn(&Path, &Path) -> bool,
    timeout: Duration,
) -> Result<(), String> {
    let out = work.join(format!("{name}.out"));
    let err = work.join(format!("{name}.err"));
    let file =
        |path: &Path| std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()));
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--enable-unsafe-swiftshader",
            "--no-first-run",
            "--virtual-time-budget=20000",
            // A load that never settles is stopped by Chromium itself after a minute.
            "--timeout=60000",
            "--window-size=1280,720",
        ])
        // A profile per run: a Chromium that lingers never locks the next one out.
        .arg(format!(
            "--user-data-dir={}",
            work.join(format!("chromium-{name}")).display()
        ))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(file(&out)?)
        .stderr(file(&err)?);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("{}: {e}", chromium.display()))?;
    let start = Instant::now();
    let mut complete_since: Option<Instant> = None;
    let result = loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() || done(&err, &out) => break Ok(()),
            Ok(Some(status)) => break Err(format!("chromium failed ({status}) on {url}")),
            Ok(None) => {}
            Err(e) => break Err(format!("waiting for chromium: {e}")),
        }
        if done(&err, &out) {
            let since = *complete_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= EXIT_GRACE {
                // The result is complete and Chromium lingers: it is not waited for.
                println!(
                    "chromium lingered after its {name} of {url} was complete: killed after {:.1} s",
                    start.elapsed().as_secs_f64()
                );
                break Ok(());
            }
        }
        if start.elapsed() >= timeout {
            break Err(format!(
                "chromium did not finish {name} of {url} within {} s and was killed",
                timeout.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    kill_group(&mut child);
    result.map_err(|message| {
        let said = std::fs::read_to_string(&err).unwrap_or_default();
        let tail: Vec<&str> = said.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("{message}; its last words: {}", tail.join(" | "))
    })
}

/// Kills `child` and every process of its group (Chromium's helpers), and reaps it.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        // The group's id is the child's pid (`process_group(0)`); kill(1) reaches the whole
        // group without unsafe code.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A static file server on 127.0.0.1 for a folder and, for the app, one profile (`/profile`),
/// stopped when dropped. Each connection is answered on a thread of its own.
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(folder: PathBuf, profile: Option<PathBuf>) -> std::io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let files = Arc::new((folder, profile));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let files = files.clone();
                // Detached: each ends by its timeouts at the latest. A failed request fails
                // the page load, which the caller sees.
                std::thread::spawn(move || {
                    let _ = serve(stream, &files.0, files.1.as_deref());
                });
            }
        });
        Ok(Server {
            port,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag; the loop itself never blocks on a
        // connection, so joining it cannot hang.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(stream: TcpStream, folder: &Path, profile: Option<&Path>) -> std::io::Result<()> {
    // A connection the browser opened ahead and never used, or a reader that stopped reading,
    // ends here instead of holding its thread.
    stream.set_read_timeout(Some(IDLE_CONNECTION))?;
    stream.set_write_timeout(Some(IDLE_CONNECTION))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or("/");
    let file = match path {
        p if p.strip_prefix('/') == Some(IMPORTED_NAME) && profile.is_some() => {
            profile.map(Path::to_path_buf)
        }
        "/" => Some(folder.join("index.html")),
        p if !p.contains("..") => Some(folder.join(p.trim_start_matches('/'))),
        _ => None,
    };
    let mut stream = stream;
    let mut body = Vec::new();
    match file.and_then(|f| std::fs::File::open(f).ok()) {
        Some(mut f) => {
            f.read_to_end(&mut body)?;
            let kind = match Path::new(path).extension().and_then(|e| e.to_str()) {
                Some("html") => "text/html",
                Some("js") => "text/javascript",
                Some("css") => "text/css",
                Some("wasm") => "application/wasm",
                Some("png") => "image/png",
                Some("svg") => "image/svg+xml",
                Some("woff2") => "font/woff2",
                _ => "application/octet-stream",
            };
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            stream.write_all(&body)?;
        }
        None => {
            stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )?;
        }
    }
    stream.flush()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)] // a failure is the test's panic

    use super::*;

    /// A folder of its own for one test, and a fake `chromium` in it running `script`.
    fn fake_chromium(test: &str, script: &str) -> (PathBuf, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let work =
            std::env::temp_dir().join(format!("profcodec-testkit-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        let program = work.join("chromium");
        std::fs::write(&program, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        (work, program)
    }

    /// Whether the process whose pid `work/pid` holds is gone (or dead, waiting to be reaped
    /// by whoever adopted it) within a second.
    fn helper_gone(work: &Path) -> bool {
        let pid = std::fs::read_to_string(work.join("pid")).unwrap();
        let stat = Path::new("/proc").join(pid.trim()).join("stat");
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(1) {
            match std::fs::read_to_string(&stat) {
                Err(_) => return true,
                Ok(s)
                    if s.rsplit(") ")
                        .next()
                        .is_some_and(|rest| rest.starts_with('Z')) =>
                {
                    return true;
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        false
    }

    #[test]
    fn a_browser_that_never_finishes_fails_in_bounded_time() {
        // A helper holds the output open, as Chromium's helpers do; nothing is ever printed.
        let (work, program) = fake_chromium(
            "hang",
            "sleep 300 & echo $! > \"$(dirname \"$0\")/pid\"; sleep 300",
        );
        let start = Instant::now();
        let result = run_chromium(
            &program,
            "http://127.0.0.1:1/",
            &work,
            "dom",
            &[],
            &dom_complete,
            Duration::from_secs(2),
        );
        let message = result.unwrap_err();
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        assert!(
            message.contains("did not finish dom") && message.contains("killed"),
            "{message}"
        );
        assert!(helper_gone(&work), "the browser's helper outlived it");
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn a_browser_that_lingers_after_its_result_is_not_waited_for() {
        let (work, program) = fake_chromium(
            "linger",
            "sleep 300 & echo $! > \"$(dirname \"$0\")/pid\"; echo '<html><title>t</title></html>'; sleep 300",
        );
        let start = Instant::now();
        run_chromium(
            &program,
            "http://127.0.0.1:1/",
            &work,
            "dom",
            &[],
            &dom_complete,
            Duration::from_secs(60),
        )
        .unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        assert!(dom_complete(&work, &work.join("dom.out")));
        assert!(helper_gone(&work), "the browser's helper outlived it");
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn an_idle_connection_holds_up_no_request() {
        let folder =
            std::env::temp_dir().join(format!("profcodec-testkit-serve-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("index.html"), "<html></html>").unwrap();
        let server = Server::start(folder.clone(), None).unwrap();
        // A connection opened ahead and never used, as browsers open them.
        let _idle = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        stream
            .write_all(b"GET /index.html HTTP/1.1\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 200 OK") && answer.ends_with("<html></html>"),
            "{answer}"
        );
        drop(server);
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
