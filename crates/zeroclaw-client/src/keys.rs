//! One key from the terminal, without waiting for Enter (zerocode's approvals and
//! `zeroclaw prompt`'s, one implementation for both): the terminal is put in
//! non-canonical mode (no line buffering, no echo, Ctrl-C read as a key) for the read only,
//! and put back when the read ends or is abandoned (the future dropped: the daemon went
//! away), on every path.
//!
//! The blocking read runs on tokio's blocking pool and waits in slices of [`SLICE`], so a
//! read that is abandoned stops within one slice instead of eating the next key typed at
//! the prompt. An Esc is told from the start of an arrow key's sequence by what follows it
//! at once (within [`SEQUENCE_GAP`]): a terminal sends a sequence in one write.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// One key, as the approval question reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    Esc,
    Enter,
    /// Alt-Enter (Esc then Enter on a terminal).
    AltEnter,
    /// Backspace (DEL or ^H).
    Backspace,
    CtrlC,
    CtrlD,
    /// Shift-Tab (`ESC [ Z` on a terminal).
    ShiftTab,
    /// Anything else: an arrow or function key, another control key, a non-ASCII byte.
    Other,
}

/// How long one wait for input lasts before the read checks whether it was abandoned.
const SLICE: Duration = Duration::from_millis(100);
/// How soon after an Esc the rest of an escape sequence must follow to count as one.
#[cfg_attr(not(unix), allow(dead_code))]
const SEQUENCE_GAP: Duration = Duration::from_millis(30);

/// Reads one key from the terminal on stdin. `None` when stdin is not a terminal (or its
/// mode cannot be changed, or reading it fails): read a line instead.
pub async fn read() -> Option<Key> {
    let raw = platform::Raw::enter()?;
    let abandoned = Arc::new(AtomicBool::new(false));
    // Sets `abandoned` when this future ends or is dropped, so the blocking read stops;
    // declared after `raw`, so it drops first and the terminal is restored after it.
    let _stop = Abandon(abandoned.clone());
    let key = tokio::task::spawn_blocking(move || platform::read_key(&abandoned)).await;
    drop(raw);
    key.ok().flatten()
}

struct Abandon(Arc<AtomicBool>);

impl Drop for Abandon {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The key a byte stands for (on Unix, where keys arrive as bytes).
#[cfg_attr(not(unix), allow(dead_code))]
fn from_byte(byte: u8) -> Key {
    match byte {
        0x03 => Key::CtrlC,
        0x04 => Key::CtrlD,
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        0x1b => Key::Esc,
        0x20..=0x7e => Key::Char(char::from(byte)),
        _ => Key::Other,
    }
}

#[cfg(unix)]
mod platform {
    use super::{Key, SEQUENCE_GAP, SLICE, from_byte};
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::termios::{
        LocalModes, OptionalActions, SpecialCodeIndex, Termios, tcgetattr, tcsetattr,
    };
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    /// The terminal in non-canonical mode while it lives; its mode before, put back on drop.
    pub struct Raw {
        before: Termios,
    }

    impl Raw {
        pub fn enter() -> Option<Self> {
            let stdin = std::io::stdin();
            if !stdin.is_terminal() {
                return None;
            }
            let before = tcgetattr(&stdin).ok()?;
            let mut raw = before.clone();
            // Keys one by one, unechoed, Ctrl-C and Ctrl-D as bytes; output processing (\n
            // as \r\n) stays on, so lines printed meanwhile look as usual.
            raw.local_modes
                .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
            raw.special_codes[SpecialCodeIndex::VMIN] = 1;
            raw.special_codes[SpecialCodeIndex::VTIME] = 0;
            tcsetattr(&stdin, OptionalActions::Now, &raw).ok()?;
            Some(Self { before })
        }
    }

    impl Drop for Raw {
        fn drop(&mut self) {
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.before);
        }
    }

    /// Whether a byte is ready within `wait`; `None` on an error or a hang-up.
    fn ready(wait: Duration) -> Option<bool> {
        let stdin = std::io::stdin();
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let timeout = Timespec::try_from(wait).ok()?;
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => Some(false),
            Ok(_) if fds[0].revents().contains(PollFlags::IN) => Some(true),
            Ok(_) => None,
            Err(rustix::io::Errno::INTR) => Some(false),
            Err(_) => None,
        }
    }

    /// One byte straight from the descriptor (std's stdin would buffer more, which the
    /// line editor would then never see).
    fn byte() -> Option<u8> {
        let mut buf = [0u8; 1];
        match rustix::io::read(std::io::stdin(), &mut buf) {
            Ok(1) => Some(buf[0]),
            _ => None,
        }
    }

    /// The next byte if one follows at once (part of the same sequence).
    fn following() -> Option<u8> {
        ready(SEQUENCE_GAP)?.then(byte).flatten()
    }

    pub fn read_key(abandoned: &AtomicBool) -> Option<Key> {
        loop {
            if abandoned.load(Ordering::Relaxed) {
                return None;
            }
            if ready(SLICE)? {
                break;
            }
        }
        // Abandoned while the key arrived: it is left for the next reader.
        if abandoned.load(Ordering::Relaxed) {
            return None;
        }
        let first = byte()?;
        if first != 0x1b {
            return Some(from_byte(first));
        }
        // Esc alone, or the start of a sequence: CSI (`ESC [` parameters, a final byte in
        // 0x40..=0x7e), SS3 (`ESC O` and one byte), or Alt with a key (`ESC` and one byte).
        match following() {
            None => Some(Key::Esc),
            Some(b'[') => {
                let mut first = true;
                while let Some(b) = following() {
                    if (0x40..=0x7e).contains(&b) {
                        // `ESC [ Z`, without parameters: Shift-Tab.
                        return Some(if first && b == b'Z' {
                            Key::ShiftTab
                        } else {
                            Key::Other
                        });
                    }
                    first = false;
                }
                Some(Key::Other)
            }
            Some(b'O') => {
                let _ = following();
                Some(Key::Other)
            }
            Some(b'\r' | b'\n') => Some(Key::AltEnter),
            Some(_) => Some(Key::Other),
        }
    }
}

#[cfg(windows)]
mod platform {
    use super::{Key, SLICE};
    use std::sync::atomic::{AtomicBool, Ordering};
    use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0};
    use windows_sys::Win32::System::Console::{
        CONSOLE_MODE, ENABLE_ECHO_INPUT, ENABLE_LINE_INPUT, ENABLE_PROCESSED_INPUT, GetConsoleMode,
        GetStdHandle, INPUT_RECORD, KEY_EVENT, ReadConsoleInputW, STD_INPUT_HANDLE, SetConsoleMode,
    };
    use windows_sys::Win32::System::Threading::WaitForSingleObject;

    const VK_ESCAPE: u16 = 0x1b;

    fn stdin() -> Option<HANDLE> {
        // SAFETY: GetStdHandle has no preconditions; the handle is checked below.
        let handle = unsafe { GetStdHandle(STD_INPUT_HANDLE) };
        (!handle.is_null() && handle != INVALID_HANDLE_VALUE).then_some(handle)
    }

    /// The console in unbuffered, unechoed input mode (Ctrl-C read as a key) while it
    /// lives; its mode before, put back on drop.
    pub struct Raw {
        before: CONSOLE_MODE,
    }

    impl Raw {
        pub fn enter() -> Option<Self> {
            let handle = stdin()?;
            let mut before: CONSOLE_MODE = 0;
            // SAFETY: `handle` is the process's stdin handle and `before` a valid out
            // pointer; the call fails (0) when stdin is not a console.
            if unsafe { GetConsoleMode(handle, &mut before) } == 0 {
                return None;
            }
            let raw = before & !(ENABLE_LINE_INPUT | ENABLE_ECHO_INPUT | ENABLE_PROCESSED_INPUT);
            // SAFETY: as above; `raw` is a mode derived from the console's own.
            if unsafe { SetConsoleMode(handle, raw) } == 0 {
                return None;
            }
            Some(Self { before })
        }
    }

    impl Drop for Raw {
        fn drop(&mut self) {
            if let Some(handle) = stdin() {
                // SAFETY: restoring the mode GetConsoleMode returned for this handle.
                unsafe { SetConsoleMode(handle, self.before) };
            }
        }
    }

    pub fn read_key(abandoned: &AtomicBool) -> Option<Key> {
        let handle = stdin()?;
        let slice = u32::try_from(SLICE.as_millis()).unwrap_or(100);
        loop {
            if abandoned.load(Ordering::Relaxed) {
                return None;
            }
            // SAFETY: waiting on the process's stdin handle with a timeout.
            if unsafe { WaitForSingleObject(handle, slice) } != WAIT_OBJECT_0 {
                continue;
            }
            // SAFETY: INPUT_RECORD is plain data, valid when zeroed; one record is read
            // into it and `read` says whether it was.
            let mut record: INPUT_RECORD = unsafe { std::mem::zeroed() };
            let mut read = 0u32;
            if unsafe { ReadConsoleInputW(handle, &mut record, 1, &mut read) } == 0 {
                return None;
            }
            if read == 0 || u32::from(record.EventType) != KEY_EVENT {
                continue;
            }
            // SAFETY: EventType is KEY_EVENT, so the union holds a KEY_EVENT_RECORD.
            let key = unsafe { record.Event.KeyEvent };
            if key.bKeyDown == 0 {
                continue;
            }
            // SAFETY: the console API fills the UnicodeChar member of the union for
            // ReadConsoleInputW.
            let unit = unsafe { key.uChar.UnicodeChar };
            return Some(match unit {
                0 if key.wVirtualKeyCode == VK_ESCAPE => Key::Esc,
                // A key with no character (Shift, an arrow): not an answer, keep reading.
                0 => continue,
                3 => Key::CtrlC,
                4 | 26 => Key::CtrlD,
                // Either Alt key held (RIGHT_ALT_PRESSED 0x1, LEFT_ALT_PRESSED 0x2).
                13 | 10 if key.dwControlKeyState & 0x3 != 0 => Key::AltEnter,
                13 | 10 => Key::Enter,
                8 => Key::Backspace,
                // Tab with Shift held (SHIFT_PRESSED 0x10).
                9 if key.dwControlKeyState & 0x10 != 0 => Key::ShiftTab,
                27 => Key::Esc,
                unit => match char::from_u32(u32::from(unit)) {
                    Some(c) if !c.is_control() => Key::Char(c),
                    _ => Key::Other,
                },
            });
        }
    }
}

#[cfg(not(any(unix, windows)))]
mod platform {
    use super::Key;
    use std::sync::atomic::AtomicBool;

    pub struct Raw;

    impl Raw {
        pub fn enter() -> Option<Self> {
            None
        }
    }

    pub fn read_key(_: &AtomicBool) -> Option<Key> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_the_keys_the_question_knows() {
        assert_eq!(from_byte(b'y'), Key::Char('y'));
        assert_eq!(from_byte(0x1b), Key::Esc);
        assert_eq!(from_byte(0x03), Key::CtrlC);
        assert_eq!(from_byte(0x04), Key::CtrlD);
        assert_eq!(from_byte(b'\r'), Key::Enter);
        assert_eq!(from_byte(0x7f), Key::Backspace);
        assert_eq!(from_byte(0xc3), Key::Other);
    }
}

/// The console reader itself, run (under Wine in CI): this test binary starts itself again in
/// a pseudo console (ConPTY) and types keys into it, as a terminal would; the child reads
/// them with [`read`], checks the console's mode is put back after each, and writes what it
/// read to a file.
#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;
    use std::fs::File;
    use std::io::{Read, Write};
    use std::os::windows::io::FromRawHandle;
    use windows_sys::Win32::Foundation::{
        CloseHandle, GENERIC_READ, GENERIC_WRITE, HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0,
    };
    use windows_sys::Win32::Storage::FileSystem::{
        CreateFileW, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
    };
    use windows_sys::Win32::System::Console::{
        CONSOLE_MODE, COORD, ClosePseudoConsole, CreatePseudoConsole, GetConsoleMode, HPCON,
        STD_INPUT_HANDLE, SetStdHandle,
    };
    use windows_sys::Win32::System::Pipes::CreatePipe;
    use windows_sys::Win32::System::Threading::{
        CREATE_UNICODE_ENVIRONMENT, CreateProcessW, EXTENDED_STARTUPINFO_PRESENT,
        GetExitCodeProcess, InitializeProcThreadAttributeList, PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE,
        PROCESS_INFORMATION, STARTUPINFOEXW, UpdateProcThreadAttribute, WaitForSingleObject,
    };

    /// Where the child writes the keys it read; set only in the child's environment.
    const CHILD_OUT: &str = "ZEROCODE_KEYS_CHILD_OUT";
    const CHILD: &str = "keys::windows_tests::child_reads_keys_from_its_console";
    /// What is typed, and the keys the child must read from it, in order.
    const TYPED: &[u8] = b"ya\r\x1b";
    const READ: [Key; 4] = [Key::Char('y'), Key::Char('a'), Key::Enter, Key::Esc];

    /// The child's half: run only by the parent below (ignored otherwise).
    #[tokio::test]
    #[ignore = "run by keys_typed_into_a_pseudo_console_are_read_one_at_a_time"]
    async fn child_reads_keys_from_its_console() {
        let Some(out) = std::env::var_os(CHILD_OUT) else {
            return;
        };
        let console = console_as_stdin();
        let before = mode(console);
        let mut keys = Vec::new();
        for _ in READ {
            keys.push(read().await);
            assert_eq!(
                mode(console),
                before,
                "the console's mode is put back after a read"
            );
        }
        std::fs::write(out, format!("{keys:?}")).unwrap();
    }

    /// Makes this process's console input its stdin, as it is for zerocode run in a
    /// console: the child inherits the test runner's redirected handles otherwise.
    fn console_as_stdin() -> HANDLE {
        let name: Vec<u16> = "CONIN$\0".encode_utf16().collect();
        // SAFETY: `name` is a NUL-terminated UTF-16 string; the result is checked.
        let console = unsafe {
            CreateFileW(
                name.as_ptr(),
                GENERIC_READ | GENERIC_WRITE,
                FILE_SHARE_READ | FILE_SHARE_WRITE,
                std::ptr::null(),
                OPEN_EXISTING,
                0,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(console, INVALID_HANDLE_VALUE, "open the console's input");
        // SAFETY: a console input handle opened above, kept open for the process.
        assert_ne!(unsafe { SetStdHandle(STD_INPUT_HANDLE, console) }, 0);
        console
    }

    fn mode(console: HANDLE) -> CONSOLE_MODE {
        let mut mode = 0;
        // SAFETY: a console handle and a valid out pointer.
        assert_ne!(unsafe { GetConsoleMode(console, &mut mode) }, 0);
        mode
    }

    fn pipe() -> (HANDLE, HANDLE) {
        let (mut read, mut write) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: two valid out pointers; no security attributes (not inherited).
        assert_ne!(
            unsafe { CreatePipe(&mut read, &mut write, std::ptr::null(), 0) },
            0
        );
        (read, write)
    }

    #[test]
    fn keys_typed_into_a_pseudo_console_are_read_one_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("keys.txt");
        let (console_in, typed) = pipe();
        let (shown, console_out) = pipe();
        let mut console: HPCON = 0;
        let size = COORD { X: 80, Y: 25 };
        // SAFETY: two pipe ends made above and a valid out pointer.
        let made = unsafe { CreatePseudoConsole(size, console_in, console_out, 0, &mut console) };
        assert_eq!(made, 0, "CreatePseudoConsole");

        let mut list_size = 0usize;
        // SAFETY: the documented size query (a null list fails and sets the size).
        unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), 1, 0, &mut list_size) };
        let mut list = vec![0usize; list_size.div_ceil(size_of::<usize>())];
        let attributes = list.as_mut_ptr().cast();
        // SAFETY: `list` holds at least `list_size` bytes, aligned for pointers; the
        // pseudo console handle outlives the child's creation.
        unsafe {
            assert_ne!(
                InitializeProcThreadAttributeList(attributes, 1, 0, &mut list_size),
                0
            );
            assert_ne!(
                UpdateProcThreadAttribute(
                    attributes,
                    0,
                    PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE as usize,
                    console as *const std::ffi::c_void,
                    size_of::<HPCON>(),
                    std::ptr::null_mut(),
                    std::ptr::null(),
                ),
                0
            );
        }
        // SAFETY: STARTUPINFOEXW is plain data, valid when zeroed.
        let mut startup: STARTUPINFOEXW = unsafe { std::mem::zeroed() };
        startup.StartupInfo.cb = size_of::<STARTUPINFOEXW>() as u32;
        startup.lpAttributeList = attributes;

        let exe = std::env::current_exe().unwrap();
        let mut command: Vec<u16> = format!(
            "\"{}\" --exact {CHILD} --ignored --test-threads 1\0",
            exe.display()
        )
        .encode_utf16()
        .collect();
        let mut environment: Vec<u16> = std::env::vars_os()
            .filter(|(name, _)| name != CHILD_OUT)
            .chain([(CHILD_OUT.into(), out.clone().into_os_string())])
            .flat_map(|(name, value)| {
                let mut entry = name;
                entry.push("=");
                entry.push(value);
                std::os::windows::ffi::OsStrExt::encode_wide(entry.as_os_str())
                    .chain([0])
                    .collect::<Vec<u16>>()
            })
            .collect();
        environment.push(0);
        // SAFETY: PROCESS_INFORMATION is plain data, valid when zeroed.
        let mut child: PROCESS_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated, writable command line; a double-NUL-terminated UTF-16
        // environment block; the startup info with its attribute list built above.
        let started = unsafe {
            CreateProcessW(
                std::ptr::null(),
                command.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT,
                environment.as_ptr().cast(),
                std::ptr::null(),
                &startup.StartupInfo,
                &mut child,
            )
        };
        assert_ne!(started, 0, "start the child in the pseudo console");
        // SAFETY: the pseudo console holds its own copies of these ends.
        unsafe {
            CloseHandle(console_in);
            CloseHandle(console_out);
        }
        // The console's output must be read, or it stops when the pipe fills.
        // SAFETY: `shown` is a pipe end owned here from now on.
        let mut shown = unsafe { File::from_raw_handle(shown) };
        let drain = std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = shown.read_to_end(&mut sink);
        });
        // SAFETY: `typed` is a pipe end owned here from now on.
        let mut keyboard = unsafe { File::from_raw_handle(typed) };
        keyboard.write_all(TYPED).unwrap();

        // A bound on a hang only: two minutes.
        // SAFETY: the child's process handle, valid until closed below.
        let waited = unsafe { WaitForSingleObject(child.hProcess, 120_000) };
        let mut status = 1u32;
        // SAFETY: as above, with a valid out pointer.
        unsafe { GetExitCodeProcess(child.hProcess, &mut status) };
        let read_back = std::fs::read_to_string(&out);

        // Closing the console is left to a thread of its own, not waited for: Wine's
        // ClosePseudoConsole waits for its console host to exit, and once, in a CI run, it
        // never returned (the child had passed). Nothing it does decides this test; the
        // process exit ends the thread if it hangs. Input is closed first, so the host is
        // not left waiting for more keys.
        drop(keyboard);
        let (process, thread) = (child.hProcess as usize, child.hThread as usize);
        std::thread::spawn(move || {
            // SAFETY: handles this test opened and no longer uses; the console's output
            // pipe ends with it, and the drain thread with that.
            unsafe {
                ClosePseudoConsole(console);
                CloseHandle(process as HANDLE);
                CloseHandle(thread as HANDLE);
            }
            let _ = drain.join();
        });

        assert_eq!(waited, WAIT_OBJECT_0, "the child read its keys and exited");
        assert_eq!(status, 0, "the child's test passed");
        let read_back = read_back.unwrap();
        assert_eq!(read_back, format!("{:?}", READ.map(Some)));
    }
}
