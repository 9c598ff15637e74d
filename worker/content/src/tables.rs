//! Which `<table>`s hold data (written as GFM pipe tables) and which only lay
//! out the page (written as ordinary blocks). One linear pass.

use std::collections::HashMap;

use super::dom::{Dom, Tag, NO_PARENT};

/// Facts about one table, counted over its own rows and cells.
#[derive(Debug, Default, Clone, Copy)]
struct Facts {
    rows: u32,
    max_cols: u32,
    header: bool,
    nested: bool,
    blocks_in_cells: u32,
}

/// Table structure of a page.
pub struct Tables {
    /// Nearest enclosing table of each node (`NO_PARENT` when none).
    table_of: Vec<u32>,
    facts: HashMap<usize, Facts>,
}

impl Tables {
    /// Counts rows, columns and cell contents of every table.
    pub fn compute(dom: &Dom<'_>) -> Tables {
        let n = dom.len();
        let mut table_of = vec![NO_PARENT; n];
        // The cell (td/th) a node sits in, within its nearest table.
        let mut cell_of = vec![NO_PARENT; n];
        let mut facts: HashMap<usize, Facts> = HashMap::new();
        if dom.find(Tag::Table).is_none() {
            return Tables { table_of, facts };
        }
        let mut row_cols: HashMap<usize, u32> = HashMap::new();
        for i in 1..n {
            let p = dom.nodes[i].parent as usize;
            let (t, c) = match dom.tag(p) {
                Some(Tag::Table) => (p as u32, NO_PARENT),
                Some(Tag::Td | Tag::Th) => (table_of[p], p as u32),
                _ => (table_of[p], cell_of[p]),
            };
            table_of[i] = t;
            cell_of[i] = c;
            let Some(tag) = dom.tag(i) else { continue };
            if tag == Tag::Table {
                facts.entry(i).or_default();
            }
            if t == NO_PARENT {
                continue;
            }
            let f = facts.entry(t as usize).or_default();
            match tag {
                Tag::Tr => f.rows += 1,
                Tag::Th | Tag::Caption => f.header = true,
                Tag::TableSection if dom.name(i) == "thead" => f.header = true,
                Tag::Table => f.nested = true,
                Tag::Div | Tag::Ul | Tag::Ol | Tag::H(_) | Tag::Blockquote | Tag::Pre | Tag::P
                    if c != NO_PARENT =>
                {
                    f.blocks_in_cells += 1
                }
                _ => {}
            }
            if matches!(tag, Tag::Td | Tag::Th) && dom.tag(p) == Some(Tag::Tr) {
                let span = dom
                    .attr(i, "colspan")
                    .and_then(|s| s.trim().parse::<u32>().ok())
                    .unwrap_or(1)
                    .clamp(1, 64);
                let cols = row_cols.entry(p).or_insert(0);
                *cols += span;
                let cols = *cols;
                if let Some(f) = facts.get_mut(&(t as usize)) {
                    f.max_cols = f.max_cols.max(cols);
                }
            }
        }
        Tables { table_of, facts }
    }

    /// The nearest table enclosing node `i` (`NO_PARENT` as usize when none).
    pub fn table_of(&self, i: usize) -> usize {
        self.table_of.get(i).copied().unwrap_or(NO_PARENT) as usize
    }

    /// A data table: headers or a real grid, not a page layout.
    pub fn is_data(&self, dom: &Dom<'_>, i: usize) -> bool {
        if matches!(dom.attr(i, "role"), Some("presentation" | "none")) {
            return false;
        }
        let Some(f) = self.facts.get(&i) else {
            return false;
        };
        if f.max_cols < 2 || f.nested {
            return false;
        }
        if f.header || f.rows >= 10 || f.max_cols > 4 {
            return true;
        }
        f.blocks_in_cells == 0
    }
}
