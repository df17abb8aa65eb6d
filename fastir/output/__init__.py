"""How results look: text tables (markdown, csv, json, LaTeX) and pictures (matplotlib).
Both know arrays and names only, no fastir type."""
