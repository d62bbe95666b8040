//! `zeroclaw service install|uninstall|status`: the daemon as a per-user service, started
//! on demand (docs/service.md). On Linux a systemd user unit pair: `zeroclaw.socket` (the
//! endpoint, passed to the daemon: socket activation) and `zeroclaw.service`
//! (`Type=notify`, a watchdog, hardening the daemon works under). On macOS a launchd agent
//! plist; on Windows a logon task (`schtasks`). `--dry-run` prints what would be written
//! and run, and changes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use zeroclaw_ipc::Paths;

/// The watchdog period the unit asks for; the daemon pings at half of it.
const WATCHDOG_SECS: u64 = 30;
/// The launchd agent's label, and the plist's file name.
pub const LAUNCHD_LABEL: &str = "dev.zeroclaw.daemon";
/// The Windows task's name.
const TASK: &str = "zeroclaw";

/// One file the install writes.
pub struct Unit {
    pub path: PathBuf,
    pub text: String,
}

/// What `service install` writes and runs, for this platform.
pub struct Plan {
    pub files: Vec<Unit>,
    /// Commands run after the files are written (printed, not run, with `--dry-run` or
    /// when the tool is missing).
    pub commands: Vec<Vec<String>>,
}

/// The `zeroclaw` binary the service runs: this one.
fn exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot tell where this zeroclaw binary is: {e}"))
}

/// The daemon's command line: this binary, the config dir spelt out (so the service's
/// endpoint is the one `zeroclaw endpoint` prints here), `daemon`.
fn daemon_args(exe: &Path, paths: &Paths) -> Vec<String> {
    vec![
        exe.display().to_string(),
        "--config-dir".into(),
        paths.config_dir.display().to_string(),
        "daemon".into(),
    ]
}

/// A word of a systemd command line or directive: quoted, with `\`, `"`, `%` and `$`
/// escaped (systemd.service(5), "Command lines"; systemd.unit(5), "Specifiers").
fn systemd_word(word: &str) -> String {
    let escaped = word
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%")
        .replace('$', "$$");
    format!("\"{escaped}\"")
}

/// A path in a directive that takes a path (no quoting there; specifiers escaped).
fn systemd_path(path: &Path) -> String {
    path.display().to_string().replace('%', "%%")
}

/// The variables that move the endpoint or the data dir, carried into the service so it
/// serves what this shell's clients connect to.
fn carried_env() -> Vec<(&'static str, String)> {
    ["ZEROCLAW_SOCKET", "ZEROCLAW_DATA_DIR"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k, v)))
        .collect()
}

/// `PrivateTmp=yes`, unless the daemon's own files live under a temporary directory: a
/// private one would hide them from it (and its socket from the clients).
fn private_tmp(paths: &Paths) -> &'static str {
    let temporary = |p: &Path| p.starts_with("/tmp") || p.starts_with("/var/tmp");
    if temporary(&paths.data_dir)
        || temporary(&paths.config_dir)
        || temporary(paths.endpoint.as_path())
    {
        "# PrivateTmp= is off: the daemon's files are under a temporary directory.\n"
    } else {
        "PrivateTmp=yes\n"
    }
}

/// The systemd user unit pair.
pub fn systemd_units(exe: &Path, paths: &Paths, unit_dir: &Path) -> Plan {
    let endpoint = paths.endpoint.as_path();
    let socket = format!(
        "[Unit]\n\
Description=zeroclaw daemon socket ({endpoint})\n\
Documentation=man:systemd.socket(5)\n\
\n\
[Socket]\n\
ListenStream={listen}\n\
FileDescriptorName=rpc\n\
SocketMode=0600\n\
DirectoryMode=0700\n\
Service=zeroclaw.service\n\
\n\
[Install]\n\
WantedBy=sockets.target\n",
        endpoint = systemd_path(endpoint),
        listen = systemd_path(endpoint),
    );
    let exec = daemon_args(exe, paths)
        .iter()
        .map(|w| systemd_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    let environment: String = carried_env()
        .iter()
        .map(|(k, v)| format!("Environment={}\n", systemd_word(&format!("{k}={v}"))))
        .collect();
    let service = format!(
        "[Unit]\n\
Description=zeroclaw AI-agent daemon\n\
Documentation=man:systemd.service(5)\n\
Requires=zeroclaw.socket\n\
After=zeroclaw.socket\n\
\n\
[Service]\n\
Type=notify\n\
NotifyAccess=main\n\
ExecStart={exec}\n\
{environment}\
WatchdogSec={WATCHDOG_SECS}\n\
Restart=on-failure\n\
TimeoutStopSec=45\n\
# Hardening the daemon works under. The agent edits files in your projects and runs\n\
# commands there, so your home stays writable; the rest of the system is read-only.\n\
NoNewPrivileges=yes\n\
ProtectSystem=strict\n\
ReadWritePaths=%h -{data_dir} -{config_dir}\n\
{private_tmp}\
ProtectKernelTunables=yes\n\
ProtectKernelModules=yes\n\
ProtectControlGroups=yes\n\
RestrictSUIDSGID=yes\n\
LockPersonality=yes\n\
RestrictRealtime=yes\n\
\n\
[Install]\n\
WantedBy=default.target\n",
        data_dir = systemd_path(&paths.data_dir),
        config_dir = systemd_path(&paths.config_dir),
        private_tmp = private_tmp(paths),
    );
    let systemctl = |args: &[&str]| -> Vec<String> {
        std::iter::once("systemctl")
            .chain(args.iter().copied())
            .map(str::to_owned)
            .collect()
    };
    Plan {
        files: vec![
            Unit {
                path: unit_dir.join("zeroclaw.socket"),
                text: socket,
            },
            Unit {
                path: unit_dir.join("zeroclaw.service"),
                text: service,
            },
        ],
        commands: vec![
            systemctl(&["--user", "daemon-reload"]),
            systemctl(&["--user", "enable", "--now", "zeroclaw.socket"]),
        ],
    }
}

/// Text escaped for an XML element.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The launchd agent. launchd holds the endpoint (`Sockets`, named `rpc`, mode 0600) and
/// starts the daemon on the first connection, which takes the socket with
/// `launch_activate_socket` (the daemon's `service/activation.rs`); it restarts a daemon
/// that failed.
pub fn launchd_plist(exe: &Path, paths: &Paths, agents_dir: &Path) -> Plan {
    let args: String = daemon_args(exe, paths)
        .iter()
        .map(|a| format!("    <string>{}</string>\n", xml(a)))
        .collect();
    let env = carried_env();
    let environment = if env.is_empty() {
        String::new()
    } else {
        let pairs: String = env
            .iter()
            .map(|(k, v)| {
                format!(
                    "    <key>{}</key>\n    <string>{}</string>\n",
                    xml(k),
                    xml(v)
                )
            })
            .collect();
        format!("  <key>EnvironmentVariables</key>\n  <dict>\n{pairs}  </dict>\n")
    };
    let log = paths.data_dir.join("daemon.log");
    let text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
<plist version=\"1.0\">\n\
<dict>\n\
  <key>Label</key>\n\
  <string>{LAUNCHD_LABEL}</string>\n\
  <key>ProgramArguments</key>\n\
  <array>\n{args}  </array>\n\
{environment}\
  <key>Sockets</key>\n\
  <dict>\n\
    <key>rpc</key>\n\
    <dict>\n\
      <key>SockPathName</key>\n\
      <string>{endpoint}</string>\n\
      <key>SockPathMode</key>\n\
      <integer>384</integer>\n\
    </dict>\n\
  </dict>\n\
  <key>KeepAlive</key>\n\
  <dict>\n\
    <key>SuccessfulExit</key>\n\
    <false/>\n\
  </dict>\n\
  <key>ProcessType</key>\n\
  <string>Background</string>\n\
  <key>StandardErrorPath</key>\n\
  <string>{log}</string>\n\
</dict>\n\
</plist>\n",
        log = xml(&log.display().to_string()),
        endpoint = xml(&paths.endpoint.as_path().display().to_string()),
    );
    let path = agents_dir.join(format!("{LAUNCHD_LABEL}.plist"));
    let target = path.display().to_string();
    Plan {
        files: vec![Unit { path, text }],
        commands: vec![vec!["launchctl".into(), "load".into(), "-w".into(), target]],
    }
}

/// The Windows logon task: `schtasks` starts the daemon when the user logs on.
pub fn windows_task(exe: &Path, paths: &Paths) -> Plan {
    let run = daemon_args(exe, paths)
        .iter()
        .map(|a| format!("\"{a}\""))
        .collect::<Vec<_>>()
        .join(" ");
    Plan {
        files: Vec::new(),
        commands: vec![vec![
            "schtasks".into(),
            "/Create".into(),
            "/TN".into(),
            TASK.into(),
            "/SC".into(),
            "ONLOGON".into(),
            "/RL".into(),
            "LIMITED".into(),
            "/TR".into(),
            run,
            "/F".into(),
        ]],
    }
}

fn home() -> Result<PathBuf, String> {
    #[cfg(unix)]
    let home = std::env::var_os("HOME");
    #[cfg(windows)]
    let home = std::env::var_os("USERPROFILE");
    home.filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| "cannot find your home directory (HOME is not set)".to_owned())
}

/// Where systemd reads a user's units: `$XDG_CONFIG_HOME/systemd/user`.
fn systemd_unit_dir() -> Result<PathBuf, String> {
    let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home()?.join(".config"),
    };
    Ok(config.join("systemd").join("user"))
}

/// The service managers `install` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Platform {
    /// systemd user units.
    Linux,
    /// A launchd agent.
    Macos,
    /// A logon task.
    Windows,
}

impl Platform {
    /// The platform this binary runs on.
    pub fn here() -> Self {
        if cfg!(target_os = "macos") {
            Platform::Macos
        } else if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Linux
        }
    }
}

/// `platform`'s plan.
fn plan(paths: &Paths, platform: Platform) -> Result<Plan, String> {
    let exe = exe()?;
    Ok(match platform {
        Platform::Macos => {
            launchd_plist(&exe, paths, &home()?.join("Library").join("LaunchAgents"))
        }
        Platform::Windows => windows_task(&exe, paths),
        Platform::Linux => systemd_units(&exe, paths, &systemd_unit_dir()?),
    })
}

fn shown(command: &[String]) -> String {
    command.join(" ")
}

/// Whether `program` can be run here.
fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        || (program == "launchctl" && cfg!(target_os = "macos"))
        || (program == "schtasks" && cfg!(windows))
}

fn run(command: &[String]) -> Result<(), String> {
    let Some((program, args)) = command.split_first() else {
        return Ok(());
    };
    let status = Command::new(program)
        .args(args)
        .status()
        .map_err(|e| format!("cannot run `{}`: {e}", shown(command)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", shown(command)))
    }
}

/// The endpoint's directory, private, for launchd to create the socket in (systemd's
/// socket unit makes its own: `DirectoryMode=0700`).
fn endpoint_dir(paths: &Paths) -> Result<(), String> {
    let Some(dir) = paths.endpoint.as_path().parent() else {
        return Ok(());
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// `--user`: the only kind there is. The daemon is a user's (its data, its socket, its
/// rights), so no system-wide unit is offered; the flag is accepted so scripts can say it.
fn say_user(user: bool) {
    if !user {
        eprintln!(
            "note: installing a per-user service (the only kind zeroclaw offers; --user says so)"
        );
    }
}

/// `platform`: another platform's files, printed (`--dry-run --platform`), so they can
/// be checked or copied from here.
pub fn install(
    paths: &Paths,
    user: bool,
    dry_run: bool,
    platform: Option<Platform>,
) -> Result<(), String> {
    if platform.is_some_and(|p| p != Platform::here()) && !dry_run {
        return Err("--platform names another platform: use it with --dry-run".into());
    }
    let plan = plan(paths, platform.unwrap_or_else(Platform::here))?;
    if dry_run {
        for unit in &plan.files {
            println!("==> {} <==", unit.path.display());
            print!("{}", unit.text);
            println!();
        }
        for command in &plan.commands {
            println!("$ {}", shown(command));
        }
        return Ok(());
    }
    say_user(user);
    for unit in &plan.files {
        if let Some(dir) = unit.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&unit.path, &unit.text)
            .map_err(|e| format!("cannot write {}: {e}", unit.path.display()))?;
        println!("wrote {}", unit.path.display());
    }
    if platform.unwrap_or_else(Platform::here) == Platform::Macos {
        endpoint_dir(paths)?;
    }
    let tool = plan.commands.first().and_then(|c| c.first()).cloned();
    match tool {
        Some(tool) if available(&tool) => {
            for command in &plan.commands {
                println!("$ {}", shown(command));
                run(command)?;
            }
            println!("installed; clients reach it at {}", paths.endpoint);
        }
        Some(tool) => {
            println!("{tool} is not available here; run these yourself:");
            for command in &plan.commands {
                println!("  {}", shown(command));
            }
        }
        None => {}
    }
    Ok(())
}

pub fn uninstall(paths: &Paths, user: bool, dry_run: bool) -> Result<(), String> {
    let plan = plan(paths, Platform::here())?;
    let commands: Vec<Vec<String>> = if cfg!(target_os = "macos") {
        plan.files
            .iter()
            .map(|u| {
                vec![
                    "launchctl".into(),
                    "unload".into(),
                    "-w".into(),
                    u.path.display().to_string(),
                ]
            })
            .collect()
    } else if cfg!(windows) {
        vec![vec![
            "schtasks".into(),
            "/Delete".into(),
            "/TN".into(),
            TASK.into(),
            "/F".into(),
        ]]
    } else {
        vec![vec![
            "systemctl".into(),
            "--user".into(),
            "disable".into(),
            "--now".into(),
            "zeroclaw.socket".into(),
            "zeroclaw.service".into(),
        ]]
    };
    if dry_run {
        for command in &commands {
            println!("$ {}", shown(command));
        }
        for unit in &plan.files {
            println!("$ rm {}", unit.path.display());
        }
        return Ok(());
    }
    say_user(user);
    let tool = commands.first().and_then(|c| c.first()).cloned();
    if let Some(tool) = tool.filter(|t| available(t)) {
        for command in &commands {
            println!("$ {}", shown(command));
            if let Err(e) = run(command) {
                eprintln!("zeroclaw: {e} (going on)");
            }
        }
        let _ = tool;
    }
    for unit in &plan.files {
        match std::fs::remove_file(&unit.path) {
            Ok(()) => println!("removed {}", unit.path.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", unit.path.display())),
        }
    }
    if !cfg!(target_os = "macos") && !cfg!(windows) && available("systemctl") {
        let _ = run(&["systemctl".into(), "--user".into(), "daemon-reload".into()]);
    }
    Ok(())
}

/// A one-word answer of `systemctl --user is-enabled|is-active UNIT`, or `unknown`.
fn systemctl_word(question: &str, unit: &str) -> String {
    Command::new("systemctl")
        .args(["--user", question, unit])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

pub fn status(paths: &Paths, user: bool) -> Result<(), String> {
    let _ = user;
    let plan = plan(paths, Platform::here())?;
    let installed = if plan.files.is_empty() {
        Command::new("schtasks")
            .args(["/Query", "/TN", TASK])
            .output()
            .is_ok_and(|o| o.status.success())
    } else {
        plan.files.iter().all(|u| u.path.exists())
    };
    println!("installed: {}", if installed { "yes" } else { "no" });
    for unit in &plan.files {
        println!("  {}", unit.path.display());
    }
    if !cfg!(target_os = "macos") && !cfg!(windows) {
        if available("systemctl") {
            println!(
                "enabled:   {}",
                systemctl_word("is-enabled", "zeroclaw.socket")
            );
            println!(
                "socket:    {}",
                systemctl_word("is-active", "zeroclaw.socket")
            );
            println!(
                "service:   {}",
                systemctl_word("is-active", "zeroclaw.service")
            );
        } else {
            println!("enabled:   unknown (no systemctl here)");
        }
    }
    // Whether a daemon answers at the endpoint, whoever started it. Connecting to an
    // activated socket would start the daemon: only a lock holder is asked for.
    let running = match zeroclaw_ipc::data_dir_holder(paths) {
        Some(zeroclaw_ipc::Holder::Daemon { pid: Some(pid), .. }) => format!("yes (pid {pid})"),
        Some(zeroclaw_ipc::Holder::Daemon { pid: None, .. }) => "yes".into(),
        Some(_) => "no (a store command holds the data dir)".into(),
        None => "no".into(),
    };
    println!("running:   {running}");
    println!("endpoint:  {}", paths.endpoint);
    Ok(())
}
