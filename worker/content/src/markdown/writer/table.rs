//! Markdown tables: cells are collected into rows, then written as a GFM
//! pipe table (or tab-separated lines in text mode) when the table closes.

use super::{closing, Brk, TableCtx, Writer, MAX_COLUMNS};

impl Writer {
    pub(in super::super) fn open_table(&mut self, idx: usize) {
        self.raise(Brk::Para);
        let saved_out = std::mem::take(&mut self.out);
        self.table = Some(TableCtx {
            idx,
            rows: Vec::new(),
            caption: String::new(),
            saved_out,
            saved_open: std::mem::take(&mut self.open),
            saved_pend: std::mem::take(&mut self.pend),
            saved_started: self.started,
            cell_start: 0,
        });
    }

    pub(in super::super) fn open_row(&mut self) {
        if let Some(t) = self.table.as_mut() {
            t.rows.push(Vec::new());
        }
    }

    pub(in super::super) fn open_cell(&mut self) {
        self.cell += 1;
        self.pending = Brk::None;
        self.line_start = true;
        if let Some(t) = self.table.as_mut() {
            t.cell_start = self.out.len();
        }
    }

    /// Ends a cell and returns its text.
    pub(in super::super) fn take_cell(&mut self) -> String {
        for m in std::mem::take(&mut self.open).iter().rev() {
            self.out.push_str(&closing(m));
        }
        self.pend.clear();
        self.cell = self.cell.saturating_sub(1);
        self.pending = Brk::None;
        let start = self.table.as_ref().map_or(self.out.len(), |t| t.cell_start);
        let start = if self.out.is_char_boundary(start) {
            start
        } else {
            self.out.len()
        };
        let text = self.out.split_off(start);
        let text = text.trim();
        if self.md {
            text.replace('|', "\\|")
        } else {
            text.replace('\t', " ")
        }
    }

    pub(in super::super) fn close_table(&mut self) {
        let Some(mut t) = self.table.take() else {
            return;
        };
        self.out = std::mem::take(&mut t.saved_out);
        self.open = t.saved_open;
        self.pend = t.saved_pend;
        self.started = t.saved_started;
        t.rows.retain(|r| !r.is_empty());
        let cols = t
            .rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .min(MAX_COLUMNS);
        if !t.caption.is_empty() {
            self.raise(Brk::Para);
            self.flush_break();
            self.out.push_str(&t.caption);
            self.line_start = false;
        }
        if cols == 0 {
            self.raise(Brk::Para);
            return;
        }
        self.raise(Brk::Para);
        self.flush_break();
        for (k, row) in t.rows.iter().enumerate() {
            if k > 0 {
                self.out.push('\n');
                self.write_prefix();
            }
            if self.md {
                self.out.push('|');
                for c in 0..cols {
                    self.out.push(' ');
                    self.out.push_str(row.get(c).map_or("", String::as_str));
                    self.out.push_str(" |");
                }
                if k == 0 {
                    self.out.push('\n');
                    self.write_prefix();
                    self.out.push('|');
                    for _ in 0..cols {
                        self.out.push_str(" --- |");
                    }
                }
            } else {
                let cells: Vec<&str> = row.iter().take(cols).map(String::as_str).collect();
                self.out.push_str(&cells.join("\t"));
            }
        }
        self.line_start = false;
        self.raise(Brk::Para);
    }
}
