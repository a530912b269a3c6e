// Package workspace owns the truth about text: open documents with their
// versions, the position mapper between byte offsets and LSP positions, the
// workspace folders, the files on disk and which paths may be read or written.
//
// Everything inside works on byte offsets; LSP positions (UTF-16 or UTF-8
// columns) appear only at the edge, through the mapper methods of Snapshot.
// Package workspace knows nothing about models or about LSP wire types.
//
// Trust rules kept here, for every caller:
//
//   - Every file read as configuration or rules (.kimi-lsp.toml, every
//     .gitignore, .git/info/exclude, the user's config.toml) is read by
//     workspace/rulefile.Read: opened with O_NONBLOCK (a FIFO never blocks
//     the open), a regular file by fstat of the open file, size-capped
//     (1 MiB configuration, 4 MiB ignore rules), and links per file: a
//     .gitignore link is not followed (git's rule), workspace files follow
//     links only inside their folder, the user's own config.toml may be a
//     link anywhere (dotfile managers), to a regular file. Anything else is
//     skipped with one log line or configuration problem.
//   - A secret check (Folders.IsSecretURI) applies to documents of every
//     scheme by the URI's path: untitled:/ws/.env.production is as secret as
//     the file it will be saved as, and so are git:, vscode-remote: and
//     vscode-vfs: views of .env.
//   - Every file the program writes goes through Writer, which keeps a
//     replaced file's mode (setuid, setgid and sticky included), owner and
//     group.
package workspace
