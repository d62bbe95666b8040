//! One key from the terminal, without waiting for Enter: the terminal is put in
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
    CtrlC,
    CtrlD,
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
        let first = byte()?;
        if first != 0x1b {
            return Some(from_byte(first));
        }
        // Esc alone, or the start of a sequence: CSI (`ESC [` parameters, a final byte in
        // 0x40..=0x7e), SS3 (`ESC O` and one byte), or Alt with a key (`ESC` and one byte).
        match following() {
            None => Some(Key::Esc),
            Some(b'[') => {
                while let Some(b) = following() {
                    if (0x40..=0x7e).contains(&b) {
                        break;
                    }
                }
                Some(Key::Other)
            }
            Some(b'O') => {
                let _ = following();
                Some(Key::Other)
            }
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
                13 | 10 => Key::Enter,
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
        assert_eq!(from_byte(0xc3), Key::Other);
    }
}
