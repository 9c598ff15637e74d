//! Local processes: a supervised chromedriver (restarted when it dies,
//! killed on shutdown and drop) and the Chromium browsers we launch
//! ourselves, so that each one can be killed by its process group.

use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Mutex};

use super::RenderError;

/// How long chromedriver and Chromium may take to come up (2 cold cores).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Names tried on `PATH` when no Chromium path is configured.
const CHROMIUM_NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// The first executable called `name` on `PATH`.
pub(crate) fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// A configured path if it is executable, else the first known name on `PATH`.
pub(crate) fn locate(configured: Option<&Path>, names: &[&str]) -> Option<PathBuf> {
    match configured {
        Some(path) => is_executable(path).then(|| path.to_path_buf()),
        None => names.iter().find_map(|name| find_in_path(name)),
    }
}

/// Chromium: the configured path or a usual name on `PATH`.
pub(crate) fn locate_chromium(configured: Option<&Path>) -> Option<PathBuf> {
    locate(configured, CHROMIUM_NAMES)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// SIGKILL to a whole process group (Chromium's helpers die with it).
fn kill_group(pgid: u32) {
    let Ok(pgid) = i32::try_from(pgid) else {
        return;
    };
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals our own child's process
        // group (created with process_group(0)); it touches no memory.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

type SpawnJob = (Command, oneshot::Sender<std::io::Result<Child>>);

/// Starts `command` in its own process group with a parent-death signal,
/// forked from one long-lived thread: Linux sends that signal when the
/// *thread* that forked exits, so forking from a short-lived thread (a test
/// thread, a blocking-pool thread) would kill the browser early. With it,
/// chromedriver and Chromium die with us even when we are SIGKILLed.
async fn spawn_supervised(mut command: Command) -> std::io::Result<Child> {
    static LAUNCHER: std::sync::OnceLock<std::sync::Mutex<mpsc::Sender<SpawnJob>>> =
        std::sync::OnceLock::new();
    command.process_group(0);
    // SAFETY: the closure runs between fork and exec and only makes the
    // async-signal-safe prctl(2) system call.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let launcher = LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        let spawned = std::thread::Builder::new()
            .name("webdata-browser-launcher".into())
            .spawn(move || {
                while let Ok((mut command, reply)) = rx.recv() {
                    let _ = reply.send(command.spawn());
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "could not start the browser launcher thread");
        }
        std::sync::Mutex::new(tx)
    });
    let (reply, answer) = oneshot::channel();
    let sent = launcher
        .lock()
        .map_err(|_| std::io::Error::other("browser launcher lock poisoned"))?
        .send((command, reply));
    if sent.is_err() {
        return Err(std::io::Error::other("browser launcher thread is gone"));
    }
    answer
        .await
        .map_err(|_| std::io::Error::other("browser launcher thread is gone"))?
}

/// Kills a child's process group and reaps it off the async threads.
fn kill_and_reap(mut child: Child, then: impl FnOnce() + Send + 'static) {
    kill_group(child.id());
    std::thread::spawn(move || {
        let _ = child.wait();
        then();
    });
}

fn free_port() -> Result<u16, RenderError> {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| RenderError::Browser(format!("no free loopback port: {e}")))
}

/// A chromedriver process we started.
struct DriverProcess {
    child: Option<Child>,
    url: String,
    port: u16,
    pid: u32,
    generation: u64,
}

impl DriverProcess {
    fn exited(&mut self) -> Option<String> {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => None,
            Some(Ok(Some(status))) => Some(status.to_string()),
            Some(Err(e)) => Some(e.to_string()),
            None => Some("gone".into()),
        }
    }
}

impl Drop for DriverProcess {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            kill_and_reap(child, || {});
        }
    }
}

/// Starts chromedriver on a free loopback port and restarts it when it dies.
pub(crate) struct DriverSupervisor {
    path: PathBuf,
    process: Mutex<Option<DriverProcess>>,
    generation: AtomicU64,
    pid: std::sync::atomic::AtomicU32,
}

impl DriverSupervisor {
    /// A supervisor for the chromedriver at `path` (nothing runs yet).
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            process: Mutex::new(None),
            generation: AtomicU64::new(0),
            pid: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// The running chromedriver's URL and generation, starting (or
    /// restarting, after a crash) it first when needed.
    pub(crate) async fn ensure(&self) -> Result<(String, u64, u16), RenderError> {
        let mut slot = self.process.lock().await;
        if let Some(process) = slot.as_mut() {
            match process.exited() {
                None => return Ok((process.url.clone(), process.generation, process.port)),
                Some(status) => tracing::warn!(%status, "chromedriver exited; restarting it"),
            }
            *slot = None;
        }
        let mut last = None;
        for _ in 0..3 {
            match self.spawn().await {
                Ok(process) => {
                    let answer = (process.url.clone(), process.generation, process.port);
                    self.pid.store(process.pid, Ordering::Relaxed);
                    *slot = Some(process);
                    return Ok(answer);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| RenderError::Browser("chromedriver did not start".into())))
    }

    /// The process id of the running chromedriver, if any.
    pub(crate) fn pid(&self) -> Option<u32> {
        Some(self.pid.load(Ordering::Relaxed)).filter(|p| *p != 0)
    }

    /// Kills chromedriver (sessions on it die too).
    pub(crate) async fn stop(&self) {
        self.pid.store(0, Ordering::Relaxed);
        self.process.lock().await.take();
    }

    async fn spawn(&self) -> Result<DriverProcess, RenderError> {
        let port = free_port()?;
        let mut command = Command::new(&self.path);
        command
            .arg(format!("--port={port}"))
            .arg("--silent")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = spawn_supervised(command).await.map_err(|e| {
            RenderError::NotAvailable(format!(
                "could not start chromedriver ({}): {e}",
                self.path.display()
            ))
        })?;
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let mut process = DriverProcess {
            pid: child.id(),
            child: Some(child),
            url: format!("http://127.0.0.1:{port}"),
            port,
            generation,
        };
        let started = Instant::now();
        let status_url = format!("http://127.0.0.1:{port}/status");
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(2))
            .build()
            .map_err(|e| RenderError::Browser(format!("http client: {e}")))?;
        while started.elapsed() < STARTUP_TIMEOUT {
            if let Some(status) = process.exited() {
                return Err(RenderError::Browser(format!(
                    "chromedriver exited at start ({status}); port {port} may be taken"
                )));
            }
            if let Ok(reply) = http.get(&status_url).send().await {
                if reply.status().is_success() {
                    return Ok(process);
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        drop(process);
        Err(RenderError::Browser(format!(
            "chromedriver did not answer on port {port} within {STARTUP_TIMEOUT:?}"
        )))
    }
}

/// Everything a local Chromium launch needs.
pub(crate) struct LaunchOptions<'a> {
    /// The Chromium executable.
    pub binary: &'a Path,
    /// The guard proxy every request goes through.
    pub proxy: SocketAddr,
}

/// A Chromium we launched: its own process group and a fresh profile
/// directory, both removed when this is dropped.
pub(crate) struct LocalBrowser {
    child: Option<Child>,
    pid: u32,
    profile: PathBuf,
    /// Where DevTools listens.
    pub devtools: SocketAddr,
    /// The browser-level DevTools websocket URL.
    pub ws_url: String,
}

impl LocalBrowser {
    /// Starts Chromium headless with a fresh profile, waits for DevTools.
    pub(crate) async fn launch(options: &LaunchOptions<'_>) -> Result<Self, RenderError> {
        let profile = fresh_profile_dir()?;
        let mut args = super::webdriver::chromium_flags(&format!("http://{}", options.proxy));
        args.push(format!("--user-data-dir={}", profile.display()));
        args.push("--remote-debugging-port=0".into());
        args.push("--remote-debugging-address=127.0.0.1".into());
        args.push("about:blank".into());
        let mut command = Command::new(options.binary);
        command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let spawned = spawn_supervised(command).await;
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&profile);
                return Err(RenderError::NotAvailable(format!(
                    "could not start Chromium ({}): {e}",
                    options.binary.display()
                )));
            }
        };
        let pid = child.id();
        let mut browser = Self {
            child: Some(child),
            pid,
            profile,
            devtools: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            ws_url: String::new(),
        };
        let marker = browser.profile.join("DevToolsActivePort");
        let started = Instant::now();
        while started.elapsed() < STARTUP_TIMEOUT {
            if !browser.is_running() {
                return Err(RenderError::Browser("Chromium exited at start".into()));
            }
            if let Ok(text) = tokio::fs::read_to_string(&marker).await {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    if let Ok(port) = port.trim().parse::<u16>() {
                        browser.devtools = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
                        browser.ws_url = format!("ws://127.0.0.1:{port}{}", path.trim());
                        return Ok(browser);
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(RenderError::Browser(format!(
            "Chromium did not open DevTools within {STARTUP_TIMEOUT:?}"
        )))
    }

    /// The browser's process id (also its process group).
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// False once the browser process has exited.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.as_mut().map(Child::try_wait), Some(Ok(None)))
    }
}

impl Drop for LocalBrowser {
    fn drop(&mut self) {
        let profile = std::mem::take(&mut self.profile);
        let cleanup = move || {
            if !profile.as_os_str().is_empty() {
                // The group's helpers may still be writing for a moment.
                std::thread::sleep(Duration::from_millis(100));
                remove_profile(&profile);
            }
        };
        match self.child.take() {
            Some(child) => kill_and_reap(child, cleanup),
            None => {
                kill_group(self.pid);
                std::thread::spawn(cleanup);
            }
        }
    }
}

/// Prefix of our profile directories in the temp dir (then pid, counter).
const PROFILE_PREFIX: &str = "webdata-chromium-";

/// Removes a profile and the singleton-socket directory Chromium keeps for
/// it in the temp dir (left behind whenever Chromium is killed).
fn remove_profile(profile: &Path) {
    if let Ok(socket) = std::fs::read_link(profile.join("SingletonSocket")) {
        let own_dir = socket.parent().filter(|dir| {
            dir.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("org.chromium.Chromium."))
        });
        if let Some(dir) = own_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    let _ = std::fs::remove_dir_all(profile);
}

/// Removes profiles left by processes that died without cleaning up
/// (a crash, SIGKILL, a test binary exiting with its pool alive).
pub(crate) fn sweep_stale_profiles() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PROFILE_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let owner_alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !owner_alive {
            remove_profile(&entry.path());
        }
    }
}

fn fresh_profile_dir() -> Result<PathBuf, RenderError> {
    use std::os::unix::fs::DirBuilderExt;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "{PROFILE_PREFIX}{}-{}-{nanos:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| RenderError::Browser(format!("profile dir {}: {e}", dir.display())))?;
    Ok(dir)
}
