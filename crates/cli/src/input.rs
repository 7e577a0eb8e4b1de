//! Text a flag reads from a file, or from stdin when its value is `-`, never more than
//! the flag's limit: one reader, so every flag words a missing, oversized or non-text
//! input the same way.

use goodput_core::trace::{summarize_reader, TraceFormat, TraceSummary};
use std::io::Read;

/// A size in the largest binary unit that keeps it whole (`8 MiB`, `512 KiB`).
fn size_words(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The text `flag` names: the file at `path`, or stdin for `-`. Refuses more than
/// `max_bytes` (reading at most one byte past it) and text that is not UTF-8.
pub fn read_text(flag: &str, path: &str, max_bytes: u64) -> Result<String, String> {
    let (what, bytes) = if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .take(max_bytes + 1)
            .read_to_end(&mut buf)
            .map_err(|e| format!("{flag}: cannot read stdin: {e}"))?;
        ("stdin".to_string(), buf)
    } else {
        let what = format!("'{path}'");
        let file =
            std::fs::File::open(path).map_err(|e| format!("{flag}: cannot read {what}: {e}"))?;
        let mut buf = Vec::new();
        file.take(max_bytes + 1)
            .read_to_end(&mut buf)
            .map_err(|e| format!("{flag}: cannot read {what}: {e}"))?;
        (what, buf)
    };
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "{flag}: {what} is larger than {}",
            size_words(max_bytes)
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{flag}: {what} is not UTF-8 text"))
}

/// The trace `flag` names, summarised as it streams past (any size), its first rows
/// kept for a replay; `format` None detects it from the first line.
pub fn read_trace(
    flag: &str,
    path: &str,
    format: Option<TraceFormat>,
) -> Result<TraceSummary, String> {
    summarize_file(path, format).map_err(|e| format!("{flag}: {e}"))
}

/// [`read_trace`], its errors naming the file alone.
pub fn summarize_file(path: &str, format: Option<TraceFormat>) -> Result<TraceSummary, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    summarize_reader(reader, format).map_err(|e| format!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_whole_units() {
        assert_eq!(size_words(8 << 20), "8 MiB");
        assert_eq!(size_words(512 << 10), "512 KiB");
        assert_eq!(size_words(1000), "1000 bytes");
    }

    #[test]
    fn a_file_is_read_whole_up_to_its_limit_and_refused_past_it() {
        let dir = std::env::temp_dir().join(format!("goodput-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ten.txt");
        std::fs::write(&file, "0123456789").unwrap();
        let path = file.to_string_lossy().into_owned();
        assert_eq!(read_text("--x", &path, 10).unwrap(), "0123456789");
        assert_eq!(
            read_text("--x", &path, 9).unwrap_err(),
            format!("--x: '{path}' is larger than 9 bytes")
        );
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_text("--x", &path, 10).unwrap_err(),
            format!("--x: '{path}' is not UTF-8 text")
        );
        let missing = dir.join("missing.txt").to_string_lossy().into_owned();
        assert!(read_text("--x", &missing, 10)
            .unwrap_err()
            .starts_with(&format!("--x: cannot read '{missing}': ")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
