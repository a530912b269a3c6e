;; copilot.el's copilot-nes-mode (the plugin's own source, PLUGIN) against
;; kimi-lsp (KIMI_LSP_BIN) and the stand-in, with the setup of
;; editors/README.md, in emacs --batch (Emacs 30: track-changes, compat and
;; jsonrpc built in). Run by run.sh; prints ok:/FAIL: lines, then PASS.
(setq debug-on-error t)
(setq native-comp-enable-subr-trampolines nil native-comp-jit-compilation nil)
(add-to-list 'load-path (getenv "PLUGIN"))
(require 'copilot)
(require 'copilot-nes)
(setq copilot-server-executable (getenv "KIMI_LSP_BIN"))
(setq copilot-server-args
      (append '("--stdio") (when (getenv "KIMI_LOG") (list "--log-file" (getenv "KIMI_LOG") "--log-level" "debug"))))
(defvar fails 0)
(defun check (c what &optional detail)
  (princ (format "%s%s%s\n" (if c "ok: " "FAIL: ") what (if (and (not c) detail) (format " -- %S" detail) "")))
  (unless c (setq fails (1+ fails))))
(defun wait-for (secs pred)
  (let ((end (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (funcall pred)))
(find-file (concat (getenv "WS") "/main.go"))
(prog-mode) ; no go-mode in a bare Emacs: the language id is the mode's
(copilot-mode 1)
(copilot-nes-mode 1)
(check (copilot--connection-alivep) "copilot.el started kimi-lsp and initialized it")
;; The rename, as typing would.
(goto-char (point-min))
(search-forward "factor int")
(replace-match "k int")
(search-backward "k int")
(forward-char 1)
(wait-for 1 (lambda () nil)) ; track-changes sends the didChange
;; What copilot-nes-mode's idle timer calls.
(copilot-nes--request)
(check (wait-for 20 (lambda () copilot-nes--edit)) "copilot-nes shows a suggestion")
(when copilot-nes--edit
  (let* ((range (plist-get copilot-nes--edit :range))
         (text (plist-get copilot-nes--edit :text)))
    (check (= (plist-get (plist-get range :start) :line) 3) "its range starts at line 3" range)
    (check (string-match-p "if k == 0" text) "its text is the rename of the uses" text)
    (check (> (length copilot-nes--overlays) 0) (format "copilot-nes drew it (%d overlays)" (length copilot-nes--overlays)))
    (copilot-nes-accept)  ; far from the edit: jumps there
    (copilot-nes-accept)  ; at it: applies it
    (check (string= (buffer-string) "package main\n\nfunc scale(v int, k int) int {\n\tif k == 0 {\n\t\treturn v\n\t}\n\treturn v * k\n}\n")
           "copilot-nes-accept applied it" (buffer-string))
    (wait-for 2 (lambda () nil))
    (let* ((st (jsonrpc-request copilot--connection 'workspace/executeCommand '(:command "kimi.stats")))
           (ne (plist-get st :nextEdit)))
      (check (eql (plist-get ne :requested) 1) "one provider request" ne)
      (check (eql (plist-get ne :displayed) 1) "didShowInlineEdit counted displayed" ne)
      (check (eql (plist-get ne :accepted) 1) "accepted once" ne)
      (check (eql (plist-get ne :stale) 0) "none stale" ne))))
(princ (if (= fails 0) "PASS\n" "FAILED\n"))
(copilot--shutdown-server t)
(kill-emacs (if (= fails 0) 0 1))
