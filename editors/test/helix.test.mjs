// Checks editors/helix: both TOML files parse, use only keys that Helix's
// book documents, keep each language's built-in servers, and define kimi-lsp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { parse } from 'smol-toml';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helix');
const languages = parse(readFileSync(path.join(dir, 'languages.toml'), 'utf8'));
const config = parse(readFileSync(path.join(dir, 'config.toml'), 'utf8'));

// Keys documented in Helix's book, book/src/languages.md ("Language
// configuration" and "Language Server configuration" tables).
const TOP_KEYS = ['use-grammars', 'language', 'grammar', 'language-server'];
const LANGUAGE_KEYS = [
  'name', 'language-id', 'scope', 'injection-regex', 'file-types', 'shebangs', 'roots',
  'auto-format', 'diagnostic-severity', 'comment-tokens', 'comment-token', 'block-comment-tokens',
  'indent', 'language-servers', 'grammar', 'formatter', 'soft-wrap', 'text-width', 'rulers',
  'path-completion', 'word-completion', 'workspace-lsp-roots', 'persistent-diagnostic-sources',
  // Documented in the same file's examples and sections:
  'auto-pairs', 'debugger',
];
const SERVER_KEYS = ['command', 'args', 'config', 'timeout', 'environment', 'required-root-patterns'];
const SERVER_REF_KEYS = ['name', 'only-features', 'except-features'];
const FEATURES = [
  'format', 'goto-definition', 'goto-declaration', 'goto-type-definition', 'goto-reference',
  'goto-implementation', 'signature-help', 'hover', 'document-highlight', 'completion',
  'code-action', 'workspace-command', 'document-symbols', 'workspace-symbols', 'diagnostics',
  'rename-symbol', 'inlay-hints',
];

// The built-in language servers of the current Helix release, pinned from
// its languages.toml by helix-lists.mjs (release and commit in the file).
const pinned = parse(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'helix-language-servers.toml'), 'utf8'));
const BUILTIN_SERVERS = Object.fromEntries(pinned.language.map((l) => [l.name, l['language-servers']]));

// book/src/editor.md, "[editor.lsp] Section".
const EDITOR_LSP_KEYS = [
  'enable', 'display-messages', 'display-progress-messages', 'auto-signature-help',
  'display-inlay-hints', 'inlay-hints-length-limit', 'display-color-swatches',
  'display-signature-help-docs', 'snippets', 'goto-reference-include-declaration',
];
// book/src/editor.md, "[editor] Section" (the keys we set) and
// "[editor.inline-diagnostics] Section"; a filter is a severity or "disable".
const EDITOR_KEYS = ['end-of-line-diagnostics', 'inline-diagnostics'];
const INLINE_DIAGNOSTICS_KEYS = ['cursor-line', 'other-lines', 'prefix-len', 'max-wrap', 'max-diagnostics', 'min-diagnostic-width'];
const FILTERS = ['disable', 'hint', 'info', 'warning', 'error'];
// Commands we bind: static commands (book/src/keymap.md, generated static-cmd.md)
// and typable commands (generated typable-cmd.md).
const STATIC_COMMANDS = ['code_action'];
const TYPABLE_COMMANDS = ['lsp-workspace-command', 'log-open'];
const KIMI_COMMANDS = ['kimi.cancel', 'kimi.stats'];

function keysOf(obj) {
  return Object.keys(obj ?? {});
}

test('languages.toml uses only documented top-level keys', () => {
  for (const k of keysOf(languages)) assert.ok(TOP_KEYS.includes(k), `unknown top-level key ${k}`);
});

test('kimi-lsp is defined with documented keys, command and timeout', () => {
  const servers = languages['language-server'];
  assert.ok(servers && servers['kimi-lsp'], '[language-server.kimi-lsp] missing');
  const s = servers['kimi-lsp'];
  for (const k of keysOf(s)) assert.ok(SERVER_KEYS.includes(k), `unknown language-server key ${k}`);
  assert.equal(s.command, 'kimi-lsp');
  assert.equal(typeof s.timeout, 'number');
  assert.ok(Number.isInteger(s.timeout) && s.timeout >= 20, `timeout ${s.timeout}: must not be below Helix's 20 s default`);
  assert.ok(s.config && typeof s.config.kimi === 'object', 'config.kimi: the server reads its settings from the "kimi" section');
  assert.equal('apiKey' in s.config.kimi, false, 'no key in a file people share');
  for (const name of keysOf(servers)) assert.equal(name, 'kimi-lsp', `only kimi-lsp is (re)defined, found ${name}`);
});

test('every language keeps its built-in servers and appends kimi-lsp last', () => {
  const langs = languages.language;
  assert.ok(Array.isArray(langs) && langs.length >= 10, 'expected [[language]] entries for common languages');
  const seen = new Set();
  for (const lang of langs) {
    for (const k of keysOf(lang)) assert.ok(LANGUAGE_KEYS.includes(k), `${lang.name}: unknown key ${k}`);
    assert.ok(!seen.has(lang.name), `${lang.name} listed twice`);
    seen.add(lang.name);
    const builtin = BUILTIN_SERVERS[lang.name];
    assert.ok(builtin, `${lang.name}: Helix ${pinned.release} has no language of that name with servers`);
    const names = lang['language-servers'].map((s) => (typeof s === 'string' ? s : s.name));
    for (const s of lang['language-servers']) {
      if (typeof s === 'string') continue;
      for (const k of keysOf(s)) assert.ok(SERVER_REF_KEYS.includes(k), `${lang.name}: unknown key ${k}`);
      for (const f of [...(s['only-features'] ?? []), ...(s['except-features'] ?? [])]) {
        assert.ok(FEATURES.includes(f), `${lang.name}: unknown feature ${f}`);
      }
    }
    assert.deepEqual(
      lang['language-servers'].slice(0, -1),
      builtin,
      `${lang.name}: Helix ${pinned.release}'s own servers must stay, in order, as Helix lists them`,
    );
    assert.equal(names[names.length - 1], 'kimi-lsp', `${lang.name}: kimi-lsp must come last`);
    // Only these keys: anything else would override Helix's own settings for the language.
    assert.deepEqual(keysOf(lang).sort(), ['language-servers', 'name']);
  }
  for (const l of ['go', 'rust', 'python', 'typescript', 'javascript', 'c', 'cpp']) {
    assert.ok(seen.has(l), `${l} missing`);
  }
});

test('languages.toml names the Helix release its lists come from', () => {
  const text = readFileSync(path.join(dir, 'languages.toml'), 'utf8');
  assert.match(text, new RegExp(`Helix ${pinned.release.replace(/\./g, '\\.')}\\b`), `the header must say the lists are Helix ${pinned.release}'s`);
  const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');
  assert.ok(readme.includes(`Helix ${pinned.release}`), `editors/helix/README.md must name Helix ${pinned.release}`);
});

test('config.toml uses documented editor keys and existing commands', () => {
  for (const k of keysOf(config)) assert.ok(['editor', 'keys', 'theme'].includes(k), `unknown top-level key ${k}`);
  for (const k of keysOf(config.editor)) assert.ok(['lsp', ...EDITOR_KEYS].includes(k), `unexpected editor key ${k}`);
  for (const k of keysOf(config.editor['inline-diagnostics'])) assert.ok(INLINE_DIAGNOSTICS_KEYS.includes(k), `unknown [editor.inline-diagnostics] key ${k}`);
  for (const v of [config.editor['end-of-line-diagnostics'], config.editor['inline-diagnostics']?.['cursor-line'], config.editor['inline-diagnostics']?.['other-lines']]) {
    assert.ok(v === undefined || FILTERS.includes(v), `a diagnostic filter must be one of ${FILTERS.join(', ')}, found ${v}`);
  }
  for (const k of keysOf(config.editor.lsp)) assert.ok(EDITOR_LSP_KEYS.includes(k), `unknown [editor.lsp] key ${k}`);
  assert.equal(config.editor.lsp['display-progress-messages'], true, 'progress text is off by default in Helix');
  for (const mode of keysOf(config.keys)) {
    assert.ok(['normal', 'select', 'insert'].includes(mode), `unknown mode ${mode}`);
    const walk = (node, where) => {
      for (const [key, v] of Object.entries(node)) {
        if (typeof v === 'object' && !Array.isArray(v)) {
          walk(v, `${where}.${key}`);
          continue;
        }
        for (const cmd of Array.isArray(v) ? v : [v]) {
          if (cmd.startsWith(':')) {
            const [name, ...args] = cmd.slice(1).split(/\s+/);
            assert.ok(TYPABLE_COMMANDS.includes(name), `${where}.${key}: unknown typable command ${name}`);
            if (name === 'lsp-workspace-command') {
              assert.ok(KIMI_COMMANDS.includes(args[0]), `${where}.${key}: ${args[0]} needs arguments or is not a kimi command`);
            }
          } else {
            assert.ok(STATIC_COMMANDS.includes(cmd), `${where}.${key}: unknown command ${cmd}`);
          }
        }
      }
    };
    walk(config.keys[mode], `keys.${mode}`);
  }
});

// drawn is what Helix 25.07.1 draws of a line's diagnostics (severities
// 1 error … 4 hint, LSP's numbers), as helix-term's
// ui/text_decorations/diagnostics.rs and helix-view's
// annotations/diagnostics.rs decide it: below the line (inline), those at
// least as severe as the line's inline filter (cursor-line on the cursor's
// line, other-lines elsewhere; none when it is "disable"); at its end, the
// one most severe of those at least as severe as end-of-line-diagnostics
// and not drawn inline.
function drawn(severities, cursorLine, editor) {
  const rank = { error: 1, warning: 2, info: 3, hint: 4 };
  const inlineCfg = editor['inline-diagnostics'] ?? {};
  const f = (cursorLine ? inlineCfg['cursor-line'] : inlineCfg['other-lines']) ?? 'disable';
  const eol = editor['end-of-line-diagnostics'] ?? 'hint';
  const inline = f === 'disable' ? [] : severities.filter((s) => s <= rank[f]);
  const rest = severities.filter((s) => !inline.includes(s) && eol !== 'disable' && s <= rank[eol]);
  return { inline, eol: rest.length ? Math.min(...rest) : undefined };
}

// Issue 32 item 6: with config.toml, the next edit (a hint) on the line of
// another server's error is drawn, on the cursor's line and elsewhere; with
// Helix's defaults it is hidden behind the error.
test('config.toml shows a next-edit hint beside another server\'s error on the same line', () => {
  const HINT = 4, ERROR = 1, WARNING = 2;
  const shown = (d) => d.inline.includes(HINT) || d.eol === HINT;
  for (const cursor of [true, false]) {
    assert.ok(shown(drawn([ERROR, HINT], cursor, config.editor)), `cursor on the line: ${cursor}`);
    assert.ok(shown(drawn([HINT], cursor, config.editor)), `alone, cursor on the line: ${cursor}`);
    assert.ok(!shown(drawn([ERROR, HINT], cursor, {})), `Helix's defaults hide it (cursor on the line: ${cursor})`);
  }
  // The cursor's line shows a warning beside it too; elsewhere the warning wins the line's end.
  assert.ok(shown(drawn([WARNING, HINT], true, config.editor)));
});
