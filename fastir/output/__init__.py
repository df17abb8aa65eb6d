"""How results look: text tables (markdown, csv, json, LaTeX) and pictures (matplotlib),
knowing arrays and names only, no fastir type; and where they go, all there or an error
naming where to (:mod:`fastir.output.writing`)."""
