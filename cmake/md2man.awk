# md2man.awk - converts the Markdown of docs/cli.md into a man page (roff, man macros), so the
# manual is written once and gpuprio(1) cannot drift from it. Plain POSIX awk (Debian's mawk
# runs it): no pandoc or ronn to install for a build.
#
#   awk -v version=0.1.0 -v source=docs/cli.md -f md2man.awk docs/cli.md > gpuprio.1
#
# version goes into the footer; source is named in a comment at the top. The subset of Markdown it
# understands (tests/package/md2man-sample.md uses all of it; package.man checks the result):
#   # NAME(SECTION)          .TH (the first line; title and section come from it)
#   ## HEADING / ### HEAD    .SH / .SS
#   paragraphs               .PP, one output line per paragraph (a `code` span may span lines)
#   ``` fenced blocks ```    .nf/.fi, indented, every character literal
#   - bullet items           .IP \(bu, continued by indented lines
#   TERM / : definition      .TP (a term may take several lines; the definition continues on
#                            lines indented by two spaces; an indented paragraph after a blank
#                            line continues the item)
#   | pipe | tables |       tbl (.TS/.TE, and the '\" t line that makes man run tbl) where the
#                            columns fit 80 columns, else a .TP list (flush_table says how)
#   `code`, **bold**         \fB..\fR; *emphasis* is \fI..\fR; [text](url) is "text <url>";
#                            a backslash before punctuation makes it literal
#   <!-- comments -->        left out, where they start a line
# Under NAME the paragraph is written without fonts ("gpuprio \- ...") for whatis and lexgrog.
# Escaping: a backslash becomes \e, a line that would start with . or ' gets \&, and a hyphen is
# a minus (\-) in code and wherever it starts a word (options, negative numbers, " - "), a
# hyphen only inside a word ("high-priority"). In code ' ` ^ ~ are the ASCII characters. The
# text is set ragged-right and unhyphenated (.ad l, .nh), since it is full of paths and options
# that must not be split. The output has no date, so that it depends on its input and the version
# alone (reproducible). The output is kept until the end, because the '\" t line that asks man
# for tbl must be the first line and only a table, anywhere, says it is needed.

BEGIN {
    nout = 0
    has_table = 0
    block = ""       # what is open: "", "para", "item", "def", "cont" (an item's later
                     # paragraph), "table"
    text = ""        # the open block's text, lines joined with spaces
    in_code = 0
    in_comment = 0
    after_heading = 0
    listctx = 0      # inside a list item or definition: indented lines continue it
    blank_before = 0
    section = ""
    ntrows = 0
}

function out(s) { lines[++nout] = s }

# A line of roff text: a leading . or ' would be read as a request.
function textline(s) {
    if (s ~ /^[.']/)
        s = "\\&" s
    out(s)
}

function isalnum(c) { return c ~ /^[A-Za-z0-9]$/ }

# Literal text of a code span or block: nothing in it is markup.
function esc_code(s,    r, i, c) {
    r = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") r = r "\\e"
        else if (c == "-") r = r "\\-"
        else if (c == "'") r = r "\\(aq"
        else if (c == "`") r = r "\\(ga"
        else if (c == "^") r = r "\\(ha"
        else if (c == "~") r = r "\\(ti"
        else r = r c
    }
    return r
}

# Running text: backslashes escaped, a hyphen that starts a word is a minus.
function esc_text(s, prev,    r, i, c) {
    r = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") r = r "\\e"
        else if (c == "-" && !isalnum(prev)) r = r "\\-"
        else r = r c
        prev = c
    }
    return r
}

# Inline Markdown to roff. plain: no font changes (the NAME line).
function inline(s, plain,    r, i, n, c, j, k, prev, seg, lt, url, bold, em) {
    r = ""; n = length(s); prev = " "; bold = 0; em = 0
    i = 1
    while (i <= n) {
        c = substr(s, i, 1)
        if (c == "\\" && i < n && substr(s, i + 1, 1) ~ /[][!-\/:-@^-`{-~]/) {
            r = r esc_text(substr(s, i + 1, 1), prev)
            prev = substr(s, i + 1, 1); i += 2; continue
        }
        if (c == "`") {
            # A run of backticks opens a span closed by the same run.
            for (k = i; k <= n && substr(s, k, 1) == "`"; k++) ;
            lt = k - i
            j = index(substr(s, k), substr(s, i, lt))
            if (j > 0) {
                seg = substr(s, k, j - 1)
                if (lt > 1) { sub(/^ /, "", seg); sub(/ $/, "", seg) }
                r = r (plain ? esc_code(seg) : "\\fB" esc_code(seg) "\\fR")
                i = k + j - 1 + lt; prev = "x"; continue
            }
            r = r esc_code(substr(s, i, lt)); i = k; prev = "`"; continue
        }
        if (c == "*" && substr(s, i, 2) == "**") {
            if (bold || index(substr(s, i + 2), "**") > 0) {
                bold = !bold
                if (!plain) r = r (bold ? "\\fB" : "\\fR")
                i += 2; continue
            }
        } else if (c == "*") {
            # *x* is emphasis when it opens before a non-space and closes after one.
            if (em && prev != " ") {
                em = 0; if (!plain) r = r "\\fR"; i++; continue
            }
            if (!em && i < n && substr(s, i + 1, 1) != " " && substr(s, i + 1) ~ /[^ ]\*/) {
                em = 1; if (!plain) r = r "\\fI"; i++; continue
            }
        }
        if (c == "[") {
            j = index(substr(s, i), "](")
            k = j > 0 ? index(substr(s, i + j + 1), ")") : 0
            if (j > 0 && k > 0) {
                lt = substr(s, i + 1, j - 2); url = substr(s, i + j + 1, k - 1)
                seg = inline(lt, plain)
                if (url != lt) seg = seg " <" esc_code(url) ">"
                r = r seg; i = i + j + k + 1; prev = ">"; continue
            }
        }
        r = r esc_text(c, prev)
        prev = c; i++
    }
    if ((bold || em) && !plain) r = r "\\fR"
    return r
}

function para_start() {
    if (!after_heading)
        out(".PP")
    after_heading = 0
}

function split_row(row, cells,    n, i, c, cur, code) {
    sub(/^[ \t]*\|/, "", row); sub(/\|[ \t]*$/, "", row)
    n = 0; cur = ""; code = 0
    for (i = 1; i <= length(row); i++) {
        c = substr(row, i, 1)
        if (c == "\\" && substr(row, i + 1, 1) == "|") { cur = cur "|"; i++; continue }
        if (c == "`") code = !code
        if (c == "|" && !code) { cells[++n] = cur; cur = ""; continue }
        cur = cur c
    }
    cells[++n] = cur
    for (i = 1; i <= n; i++) { sub(/^[ \t]+/, "", cells[i]); sub(/[ \t]+$/, "", cells[i]) }
    return n
}

# The width a cell takes on the terminal: its text without Markdown's marks.
function width(s) {
    gsub(/\\[][!-\/:-@^-`{-~]/, "x", s); gsub(/`|\*/, "", s)
    return length(s)
}

# Its longest word: the narrowest a filled column can be.
function longest_word(s,    w, n, i, m) {
    n = split(s, w, /[ \t]+/); m = 0
    for (i = 1; i <= n; i++) if (width(w[i]) > m) m = width(w[i])
    return m
}

# A cell of the last column: a text block, which tbl fills to the width left over.
function text_block(s,    r) {
    r = inline(s, 0)
    if (r ~ /^[.']/) r = "\\&" r
    return "T{\n" r "\nT}"
}

# A cell of another column: set as it is, so tbl makes the column as wide as its widest cell.
function plain_cell(s,    r) {
    r = inline(s, 0)
    if (r == "_" || r == "=" || r ~ /^\\\^/ || r ~ /^[.']/) r = "\\&" r
    return r
}

# A pipe table: with tbl where the columns before the last fit beside a last column of at least
# 20 characters in the 70 that man gives text on an 80-column terminal, so that no cell has to be
# broken (groff warns "can't break line", lintian with it); else as a list, one .TP per row
# tagged with its first cell and giving the others as "header: value" (the last one as it is).
function flush_table(    i, j, n, ncol, spec, hdr, c, line, al, a, first, w, sum, lw, body, tag,
                     lines) {
    ncol = split_row(trows[1], hdr)
    # The alignment row (| --- | :-: |) gives each column's adjustment.
    for (j = 1; j <= ncol; j++) { a[j] = "l"; w[j] = width(hdr[j]) }
    first = 2
    if (ntrows >= 2 && trows[2] ~ /^[ \t|:-]+$/) {
        split_row(trows[2], al)
        for (j = 1; j <= ncol; j++) {
            if (al[j] ~ /^:-+:$/) a[j] = "c"
            else if (al[j] ~ /-:$/) a[j] = "r"
        }
        first = 3
    }
    lw = 20
    for (i = first; i <= ntrows; i++) {
        n = split_row(trows[i], c)
        for (j = 1; j < ncol && j <= n; j++) if (width(c[j]) > w[j]) w[j] = width(c[j])
        if (n >= ncol && longest_word(c[ncol]) > lw) lw = longest_word(c[ncol])
    }
    sum = lw
    for (j = 1; j < ncol; j++) sum += w[j] + 3
    para_start()
    if (sum > 70 || ncol < 2) {
        for (i = first; i <= ntrows; i++) {
            n = split_row(trows[i], c)
            for (j = n + 1; j <= ncol; j++) c[j] = ""
            # A row without a first cell is tagged with its second.
            tag = c[1] != "" || ncol < 2 ? 1 : 2
            out(".TP")
            textline(c[tag] == "" ? "\\&" : inline(c[tag], 0))
            body = ""
            for (j = tag + 1; j < ncol; j++)
                if (c[j] != "")
                    body = body (body == "" ? "" : "; ") inline(hdr[j], 1) ": " inline(c[j], 0)
            if (body != "") { textline(body); if (c[ncol] != "" && ncol > tag) out(".br") }
            if (c[ncol] != "" && ncol > tag) textline(inline(c[ncol], 0))
        }
        ntrows = 0
        return
    }
    # Room for the whole table first: groff 1.22.4, in the continuous page man renders on a
    # terminal, warns "table text block will not fit on one page" when a text block is taller
    # than what is left of the page as it has grown so far; .ne grows it (and on paper keeps the
    # table together). The height: a line per row, more for a last cell that wraps.
    lines = 3
    for (i = first; i <= ntrows; i++) {
        n = split_row(trows[i], c)
        lines += n >= ncol ? int(width(c[ncol]) / (70 - sum + lw) + 1) : 1
    }
    out(".ne " lines "v")
    out(".TS")
    out("tab(\t);")
    spec = ""
    for (j = 1; j <= ncol; j++) spec = spec (j > 1 ? " " : "") a[j] "B"
    out(spec)
    spec = ""
    for (j = 1; j <= ncol; j++) spec = spec (j > 1 ? " " : "") a[j] (j == ncol ? "x" : "")
    out(spec ".")
    line = ""
    for (j = 1; j <= ncol; j++) line = line (j > 1 ? "\t" : "") inline(hdr[j], 1)
    out(line)
    out("_")
    for (i = first; i <= ntrows; i++) {
        n = split_row(trows[i], c)
        line = ""
        for (j = 1; j <= ncol; j++)
            line = line (j > 1 ? "\t" : "") \
                   (j == ncol ? text_block(j <= n ? c[j] : "") : plain_cell(j <= n ? c[j] : ""))
        out(line)
    }
    out(".TE")
    has_table = 1
    ntrows = 0
}

# Writes the open block.
function flush() {
    if (block == "para") {
        if (section == "NAME") {
            para_start(); textline(inline(text, 1))
        } else {
            para_start(); textline(inline(text, 0))
        }
    } else if (block == "item" || block == "def" || block == "cont") {
        textline(inline(text, 0))
    } else if (block == "table") {
        flush_table()
    }
    block = ""; text = ""
}

function add(s) {
    sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s)
    text = text == "" ? s : text " " s
}

function heading_text(s) {
    gsub(/`/, "", s); gsub(/\*/, "", s); gsub(/"/, "\\(dq", s)
    return esc_text(s, " ")
}

# HTML comments (<!-- ... --> from the start of a line) are left out.
in_comment || (!in_code && /^<!--/) {
    in_comment = index($0, "-->") == 0
    next
}

# Fenced code.
in_code {
    if ($0 ~ /^[ \t]*```/) {
        out(".fi"); out(".RE"); in_code = 0
        next
    }
    line = $0
    sub(/^  /, "", line)  # the indentation of a fence inside a list item
    textline(line == "" ? "\\&" : esc_code(line))
    next
}

/^[ \t]*```/ {
    flush()
    if (!after_heading) {
        out(listctx ? ".IP" : ".PP")
    }
    after_heading = 0
    out(".RS 4"); out(".nf")
    in_code = 1; blank_before = 0
    next
}

/^[ \t]*$/ {
    flush()
    blank_before = 1
    next
}

/^# / {
    flush()
    t = substr($0, 3)
    name = t; sec = "1"
    if (match(t, /\([0-9][a-z]*\)[ \t]*$/)) {
        name = substr(t, 1, RSTART - 1)
        sec = substr(t, RSTART + 1, RLENGTH - 2)
        sub(/\)[ \t]*$/, "", sec)
    }
    out(".TH " toupper(name) " " sec " \"\" \"" name " " version "\" \"User Commands\"")
    # Paths and options fill much of the text: no hyphenation, no stretched spaces.
    out(".nh"); out(".ad l")
    after_heading = 1; listctx = 0; blank_before = 0
    next
}

/^## / {
    flush()
    section = substr($0, 4)
    out(".SH \"" heading_text(section) "\"")
    after_heading = 1; listctx = 0; blank_before = 0
    next
}

/^###+ / {
    flush()
    t = $0; sub(/^###+ /, "", t)
    out(".SS \"" heading_text(t) "\"")
    after_heading = 1; listctx = 0; blank_before = 0
    next
}

/^[ \t]*\|/ {
    if (block != "table") { flush(); block = "table" }
    trows[++ntrows] = $0
    listctx = 0; blank_before = 0
    next
}

/^[-*+] / {
    flush()
    out(".IP \\(bu 2")
    after_heading = 0
    block = "item"; listctx = 1; blank_before = 0
    add(substr($0, 3))
    next
}

/^: / {
    # The paragraph so far is the term.
    if (block == "para") {
        out(".TP"); after_heading = 0
        textline(inline(text, 0))
        block = ""; text = ""
    } else {
        flush()
        out(".IP")
    }
    block = "def"; listctx = 1; blank_before = 0
    add(substr($0, 3))
    next
}

/^  / {
    if (listctx) {
        if (blank_before) {
            flush(); out(".IP"); block = "cont"
        }
        add($0); blank_before = 0
        next
    }
}

{
    # Text right after an item or definition, with no blank line, still belongs to it.
    if (block == "item" || block == "def" || block == "cont") {
        add($0); next
    }
    if (block != "para") {
        flush(); block = "para"; listctx = 0
    }
    add($0); blank_before = 0
}

END {
    if (in_code) { out(".fi"); out(".RE") }
    flush()
    if (has_table)
        print "'\\\" t"
    print ".\\\" Generated from " (source != "" ? source : "Markdown") \
          " by md2man.awk: edit that file, not this one."
    for (i = 1; i <= nout; i++)
        print lines[i]
}
