// Writes the pinned list of Helix's built-in language servers that
// helix.test.mjs checks editors/helix/languages.toml against: for every
// language of a Helix release's languages.toml that has language servers,
// its name and its `language-servers` entries, nothing else.
//
//   git -C helix show 25.07.1:languages.toml > /tmp/languages.toml
//   node editors/test/helix-lists.mjs /tmp/languages.toml 25.07.1 \
//     "$(git -C helix rev-parse '25.07.1^{commit}')" > editors/test/fixtures/helix-language-servers.toml
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'smol-toml';

const [file, release, commit] = process.argv.slice(2);
if (!file || !release || !commit) {
  console.error('usage: node helix-lists.mjs LANGUAGES.TOML RELEASE COMMIT');
  process.exit(2);
}
const builtin = parse(readFileSync(file, 'utf8'));
const language = builtin.language
  .filter((l) => Array.isArray(l['language-servers']) && l['language-servers'].length > 0)
  .map((l) => ({ name: l.name, 'language-servers': l['language-servers'] }))
  .sort((a, b) => a.name.localeCompare(b.name));
process.stdout.write(
  `# The built-in language servers of Helix ${release} (helix-editor/helix, commit ${commit},\n` +
    `# languages.toml): each language's name and language-servers, nothing else.\n` +
    `# Written by editors/test/helix-lists.mjs; helix.test.mjs checks\n` +
    `# editors/helix/languages.toml against it.\n` +
    stringify({ release, commit, language }) +
    '\n',
);
