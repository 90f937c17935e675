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

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
        let server = Server::start(self.app.clone(), profile.to_path_buf())
            .map_err(|e| format!("serving on 127.0.0.1: {e}"))?;
        let base = format!("http://127.0.0.1:{}", server.port);
        let url = format!("{base}/index.html#profileURL={base}/{IMPORTED_NAME}");
        let chromium = |extra: &[&str]| -> Result<Vec<u8>, String> {
            let out = Command::new(&self.chromium)
                .args([
                    "--headless",
                    "--no-sandbox",
                    "--disable-dev-shm-usage",
                    "--enable-unsafe-swiftshader",
                    "--no-first-run",
                    "--virtual-time-budget=20000",
                    "--window-size=1280,720",
                ])
                .arg(format!(
                    "--user-data-dir={}",
                    work.join("chromium-profile").display()
                ))
                .args(extra)
                .arg(&url)
                .output()
                .map_err(|e| format!("{}: {e}", self.chromium.display()))?;
            if !out.status.success() {
                return Err(format!(
                    "chromium failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Ok(out.stdout)
        };
        let dom = String::from_utf8_lossy(&chromium(&["--dump-dom"])?).into_owned();
        let screenshot = work.join("speedscope.png");
        chromium(&[&format!("--screenshot={}", screenshot.display())])?;
        let title = dom
            .split_once("<title>")
            .and_then(|(_, rest)| rest.split_once("</title>"))
            .map(|(t, _)| t.replace("&amp;", "&"))
            .unwrap_or_default();
        Ok(Rendered {
            title,
            dom,
            screenshot,
        })
    }
}

/// A static file server on 127.0.0.1 for the app and one profile (`/profile`), stopped when
/// dropped.
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(app: PathBuf, profile: PathBuf) -> std::io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    // A failed request fails the page load, which the caller sees.
                    let _ = serve(stream, &app, &profile);
                }
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
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(stream: TcpStream, app: &Path, profile: &Path) -> std::io::Result<()> {
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
        p if p.strip_prefix('/') == Some(IMPORTED_NAME) => Some(profile.to_path_buf()),
        "/" => Some(app.join("index.html")),
        p if !p.contains("..") => Some(app.join(p.trim_start_matches('/'))),
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
