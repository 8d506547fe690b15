//! Tables for people (`list`, `servers`): cells escaped ([`crate::term::line`]), columns
//! as wide as their widest cell measured in terminal columns (display width: a CJK
//! character takes two, a combining mark none), a header row, two spaces between
//! columns, and no spaces after the last cell of a line. Sizes are written the way
//! people read them ([`human_bytes`]).

use unicode_width::UnicodeWidthStr;

/// How a column's cells sit in its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: on the left.
    Left,
    /// Numbers: on the right.
    Right,
}

/// A table: its header, how each column is aligned, and its rows.
#[derive(Debug)]
pub struct Table {
    columns: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns (header text, alignment).
    pub fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            columns: columns
                .iter()
                .map(|&(name, align)| (name.to_owned(), align))
                .collect(),
            rows: Vec::new(),
        }
    }

    /// True when no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Adds a row; each cell is escaped here (it may come from a tape or a config).
    /// Missing cells are empty, extra ones dropped.
    pub fn row<S: AsRef<str>>(&mut self, cells: &[S]) {
        let mut row: Vec<String> = cells
            .iter()
            .take(self.columns.len())
            .map(|c| crate::term::line(c.as_ref()).into_owned())
            .collect();
        row.resize(self.columns.len(), String::new());
        self.rows.push(row);
    }

    /// The table as lines, each ending in `\n`, `indent` before each.
    pub fn render(&self, indent: &str) -> String {
        let header: Vec<String> = self.columns.iter().map(|(n, _)| n.clone()).collect();
        let mut widths: Vec<usize> = header.iter().map(|h| h.width()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.width());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::from(indent);
            let last = row.len().saturating_sub(1);
            for (i, cell) in row.iter().enumerate() {
                let pad = " ".repeat(widths[i].saturating_sub(cell.width()));
                match self.columns[i].1 {
                    Align::Right => {
                        line.push_str(&pad);
                        line.push_str(cell);
                    }
                    Align::Left => {
                        line.push_str(cell);
                        if i < last {
                            line.push_str(&pad);
                        }
                    }
                }
                if i < last {
                    line.push_str("  ");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// A size for people, in binary units with one decimal: `512 B`, `11.6 KiB`, `3.2 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    // f64 holds every size a file has closely enough for one decimal.
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    // 1023.96 KiB would print as `1024.0 KiB`: that is 1.0 MiB.
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_units_with_one_decimal() {
        let cases = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KiB"),
            (11_878, "11.6 KiB"),
            (3_355_443, "3.2 MiB"),
            (1_048_575, "1.0 MiB"),
            (5 << 30, "5.0 GiB"),
            (u64::MAX, "16.0 EiB"),
        ];
        for (bytes, shown) in cases {
            assert_eq!(human_bytes(bytes), shown, "{bytes}");
        }
    }

    #[test]
    fn columns_are_as_wide_as_their_widest_cell_in_terminal_columns() {
        let mut t = Table::new(&[
            ("NAME", Align::Left),
            ("N", Align::Right),
            ("WHAT", Align::Left),
        ]);
        t.row(&["日本", "5", "x"]);
        t.row(&["a\u{1b}[2J", "12345", ""]);
        assert_eq!(
            t.render(""),
            "NAME          N  WHAT\n\
             日本          5  x\n\
             a\\x1b[2J  12345\n"
        );
    }
}
