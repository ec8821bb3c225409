"""rubric.py ROOT: the rubric of every lab present, as Markdown, from the
claims its check.c states (tools/rubric.sh runs it; docs/rubric.md holds it).

A claim is the text check_that(condition, "claim", ...) and
CHECK_CALL(call, claim) print: the second argument of check_that when it is
a string literal (adjacent literals joined); a claim whose text is a
variable is the literal the variable was last given in the file (const char
*claim = "..."). What a check prints is what a student sees, so the rubric
can never promise more than the check verifies."""
import glob, os, re, sys

def literal_at(src, i):
    """The C string literals starting at src[i] (after blanks), joined, and the end."""
    parts = []
    while True:
        while i < len(src) and src[i] in ' \t\r\n':
            i += 1
        if i >= len(src) or src[i] != '"':
            break
        j = i + 1
        while src[j] != '"':
            j += 2 if src[j] == '\\' else 1
        parts.append(src[i + 1:j])
        i = j + 1
    if not parts:
        return None, i
    text = ''.join(parts).replace('\\"', '"').replace('\\n', ' ').replace('\\\\', '\\')
    return text, i

def second_argument(src, i):
    """Index of the second top-level argument of the call whose '(' is at i."""
    depth, j = 0, i
    while j < len(src):
        c = src[j]
        if c == '"':
            j += 1
            while src[j] != '"':
                j += 2 if src[j] == '\\' else 1
        elif c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth == 0:
                return None
        elif c == ',' and depth == 1:
            return j + 1
        j += 1
    return None

def claims(path):
    src = open(path, encoding='utf-8').read()
    src = re.sub(r'/\*.*?\*/', lambda m: ' ' * len(m.group(0)), src, flags=re.S)
    src = re.sub(r'//[^\n]*', '', src)
    # Claims named once: #define NAME "claim" (on one line or continued).
    macros = {}
    for d in re.finditer(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]*(?:\\\n)?', src, flags=re.M):
        text, _ = literal_at(src, d.end())
        if text:
            macros[d.group(1)] = text
    found = []
    for m in re.finditer(r'\b(check_that|CHECK_CALL|claim)\s*\(', src):
        k = second_argument(src, m.end() - 1)
        if k is None:
            continue
        text, _ = literal_at(src, k)
        if text is None:  # a macro's text, or a variable's last literal before this call
            name = re.match(r'\s*([A-Za-z_]\w*)', src[k:])
            if not name:
                continue
            text = macros.get(name.group(1))
            if text is None:
                for a in re.finditer(r'\b' + name.group(1) + r'\s*=\s*', src[:m.start()]):
                    t, _ = literal_at(src, a.end())
                    if t:
                        text = t
        if text and text not in found:
            found.append(text)
    return found

def title(readme):
    try:
        first = open(readme, encoding='utf-8').readline().strip()
    except OSError:
        return None
    return first[2:] if first.startswith('# ') else None

root = sys.argv[1]
out = []
for lab_dir in sorted(glob.glob(os.path.join(root, 'labs', '[0-9][0-9]_*'))):
    check = os.path.join(lab_dir, 'check.c')
    if not os.path.isfile(check):
        continue
    lab = os.path.basename(lab_dir)
    heading = title(os.path.join(lab_dir, 'README.md')) or 'Lab ' + lab[:2]
    out.append('\n### %s\n\n' % heading)
    out.append('`./lab check %s`; each claim on every device it runs on (cpu, sim:0, and cuda:0 where there is one).\n\n' % lab[:2])
    out.append('| # | the check claims | met |\n|---|---|---|\n')
    for n, text in enumerate(claims(check), 1):
        text = text.replace('|', '\\|')
        text = re.sub(r'%[-+ #0]*\d*(\.\d+)?[a-zA-Z]', '…', text)
        out.append('| %d | %s | |\n' % (n, text))
sys.stdout.write(''.join(out))
