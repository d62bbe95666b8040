// A small Markdown renderer that builds DOM nodes directly: every piece of text goes in
// through text nodes, never innerHTML, so model output cannot inject markup or script.
// It covers what models write: headings, paragraphs, lists, quotes, fenced code (with a
// light syntax highlighter), tables, rules, and inline code, emphasis, links.

const el = (tag, className) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
};

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

/** Renders `text` as Markdown into a new DocumentFragment. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  blocks(String(text).replace(/\r\n?/g, "\n").split("\n"), out);
  return out;
}

function blocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i++; // the closing fence (absent while a streamed answer is still writing the block)
      parent.append(codeBlock(body.join("\n"), m[2]));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const h = el(`h${Math.min(6, m[1].length + 2)}`);
      inline(m[2], h);
      parent.append(h);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      parent.append(el("hr"));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(lines[i++].replace(QUOTE, ""));
      const quote = el("blockquote");
      blocks(body, quote);
      parent.append(quote);
      continue;
    }
    if (ITEM.test(line)) {
      i = list(lines, i, parent);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      i = table(lines, i, parent);
      continue;
    }
    const para = [];
    while (
      i < lines.length &&
      lines[i].trim() &&
      !FENCE.test(lines[i]) &&
      !HEADING.test(lines[i]) &&
      !QUOTE.test(lines[i]) &&
      !(para.length && ITEM.test(lines[i])) &&
      !RULE.test(lines[i])
    ) {
      para.push(lines[i++].trim());
    }
    const p = el("p");
    inline(para.join("\n"), p);
    parent.append(p);
  }
}

function list(lines, i, parent) {
  const first = ITEM.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const node = el(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) node.setAttribute("start", String(parseInt(first[2], 10)));
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const body = [m[3]];
    i++;
    // The item's continuation: indented lines (nested lists included) and blank lines
    // followed by indented ones.
    while (i < lines.length) {
      const next = lines[i];
      const nested = ITEM.exec(next);
      if (next.trim() && (next.length - next.trimStart().length > indent) && (!nested || nested[1].length > indent)) {
        body.push(next.slice(Math.min(indent + 2, next.length - next.trimStart().length)));
        i++;
      } else if (!next.trim() && i + 1 < lines.length && lines[i + 1].length - lines[i + 1].trimStart().length > indent && lines[i + 1].trim()) {
        body.push("");
        i++;
      } else break;
    }
    const li = el("li");
    if (body.length === 1) inline(body[0], li);
    else blocks(body, li);
    node.append(li);
    if (i < lines.length && !lines[i].trim() && i + 1 < lines.length && ITEM.test(lines[i + 1])) i++;
  }
  parent.append(node);
  return i;
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|")) s = s.slice(0, -1);
  return s.split("|").map((c) => c.trim());
}

function table(lines, i, parent) {
  const wrap = el("div", "table");
  const t = el("table");
  const head = el("thead");
  const tr = el("tr");
  for (const c of cells(lines[i])) {
    const th = el("th");
    inline(c, th);
    tr.append(th);
  }
  head.append(tr);
  t.append(head);
  const body = el("tbody");
  i += 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
    const row = el("tr");
    for (const c of cells(lines[i])) {
      const td = el("td");
      inline(c, td);
      row.append(td);
    }
    body.append(row);
    i++;
  }
  t.append(body);
  wrap.append(t);
  parent.append(wrap);
  return i;
}

const INLINE =
  /(`+)([\s\S]*?[^`])\1(?!`)|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*(\S[\s\S]*?)\*\*|(?<![\w])__(\S[\s\S]*?)__(?![\w])|\*(\S[\s\S]*?)\*|(?<![\w])_(\S[\s\S]*?)_(?![\w])|~~(\S[\s\S]*?)~~|<?(https?:\/\/[^\s<>]*[^\s<>().,;:!?'"\]])>?|(\n)/;

/** Appends `text`'s inline Markdown to `parent`. */
export function inline(text, parent) {
  let rest = text;
  while (rest) {
    const m = INLINE.exec(rest);
    if (!m) {
      parent.append(rest);
      return;
    }
    if (m.index) parent.append(rest.slice(0, m.index));
    rest = rest.slice(m.index + m[0].length);
    if (m[1]) {
      const code = el("code");
      code.textContent = m[2].replace(/^ (.*) $/, "$1");
      parent.append(code);
    } else if (m[3]) {
      parent.append(link(m[4], m[3]));
    } else if (m[5] || m[6]) {
      const b = el("strong");
      inline(m[5] || m[6], b);
      parent.append(b);
    } else if (m[7] || m[8]) {
      const i = el("em");
      inline(m[7] || m[8], i);
      parent.append(i);
    } else if (m[9]) {
      const s = el("del");
      inline(m[9], s);
      parent.append(s);
    } else if (m[10]) {
      parent.append(link(m[10], null));
    } else if (m[11]) {
      parent.append(el("br"));
    }
  }
}

/** A link for http(s) and mailto targets only; anything else stays text. */
function link(href, label) {
  let url;
  try {
    url = new URL(href);
  } catch {
    url = null;
  }
  if (!url || !["http:", "https:", "mailto:"].includes(url.protocol)) {
    const span = el("span");
    span.append(label === null ? href : `${label} (${href})`);
    return span;
  }
  const a = el("a");
  a.href = url.href;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  if (label === null) a.textContent = href;
  else inline(label, a);
  return a;
}

const HASH_COMMENTS = new Set(["sh", "bash", "shell", "zsh", "console", "python", "py", "ruby", "rb", "toml", "yaml", "yml", "perl", "r", "make", "makefile", "dockerfile", "ini", "conf"]);
const DASH_COMMENTS = new Set(["sql", "lua", "haskell", "hs"]);
const KEYWORDS = new Set(
  ("as async await break case catch class const continue def default defer del do elif else enum export " +
    "extends false fn for from func function go if impl import in interface let loop match mod mut new nil " +
    "none null package pub return self static struct super switch this throw trait true try type typeof use " +
    "var where while with yield select insert update delete create table values and or not then end local " +
    "lambda pass raise except finally elif echo fi done esac println printf int str bool void char u8 u32 u64 " +
    "i32 i64 usize f64 string")
    .split(" "),
);

function tokenPattern(lang) {
  const comments = [];
  if (!HASH_COMMENTS.has(lang) && !DASH_COMMENTS.has(lang)) comments.push("\\/\\/[^\\n]*", "\\/\\*[\\s\\S]*?\\*\\/");
  if (HASH_COMMENTS.has(lang) || !lang) comments.push("#[^\\n]*");
  if (DASH_COMMENTS.has(lang)) comments.push("--[^\\n]*");
  return new RegExp(
    `(${comments.join("|")})|("(?:\\\\.|[^"\\\\\\n])*"|'(?:\\\\.|[^'\\\\\\n])*'|\`(?:\\\\.|[^\`\\\\])*\`)|(\\b(?:0x[0-9a-fA-F]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b)|([A-Za-z_][\\w]*)`,
    "g",
  );
}

/** A `<pre><code>` with spans for comments, strings, numbers and keywords. */
export function codeBlock(code, lang) {
  const pre = el("pre", "code");
  const c = el("code");
  const language = (lang || "").toLowerCase();
  if (language) c.dataset.lang = language;
  const pattern = tokenPattern(language);
  let last = 0;
  for (const m of code.matchAll(pattern)) {
    if (m[4] && !KEYWORDS.has(m[4])) continue;
    if (m.index > last) c.append(code.slice(last, m.index));
    const span = el("span", m[1] ? "tok-comment" : m[2] ? "tok-string" : m[3] ? "tok-number" : "tok-keyword");
    span.textContent = m[0];
    c.append(span);
    last = m.index + m[0].length;
  }
  if (last < code.length) c.append(code.slice(last));
  pre.append(c);
  return pre;
}
