;;; eglot-check.el --- run the README's eglot setup against kimi-lsp  -*- lexical-binding: t; -*-
;; emacs --batch -Q -l eglot-check.el FILE
;; Loads eglot as a user would (Debian's elpa-eglot, or the built-in one),
;; applies the README snippet, opens FILE in sh-mode, asks for code actions on
;; the whole buffer, runs kimi.explain through eglot and waits for the
;; explanation that eglot shows with window/showMessage. Prints "PASS" or
;; "FAIL: ..." and exits 0 or 1.

(require 'package)
(package-initialize)
(require 'eglot)

(defvar kimi-check-messages nil "Messages eglot showed, newest first.")
(advice-add 'eglot--message :around
            (lambda (orig fmt &rest args)
              (push (apply #'format fmt args) kimi-check-messages)
              (apply orig fmt args)))

(defun kimi-check-fail (fmt &rest args)
  (princ (concat "FAIL: " (apply #'format fmt args) "\n"))
  (kill-emacs 1))

(defun kimi-check-wait (what pred seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred) (kimi-check-fail "timed out waiting for %s" what))))

;; The README snippet, for sh-mode.
(add-to-list 'eglot-server-programs
             `((sh-mode) . (,(or (getenv "KIMI_LSP_BIN") "kimi-lsp")
                            :initializationOptions (:kimi (:cacheTTL "5m")))))

(let* ((file (car command-line-args-left))
       (buf (find-file-noselect file)))
  (with-current-buffer buf
    (sh-mode)
    ;; What eglot-ensure schedules for after the command loop, which batch
    ;; mode does not run.
    (apply #'eglot (eglot--guess-contact))
    (kimi-check-wait "eglot to connect" (lambda () (eglot-current-server)) 20)
    (let* ((server (eglot-current-server))
           (caps (eglot--capabilities server))
           (cmds (append (plist-get (plist-get caps :executeCommandProvider) :commands) nil)))
      (unless (member "kimi.explain" cmds)
        (kimi-check-fail "kimi.explain not among the server's commands: %S" cmds))
      (let* ((actions (append (jsonrpc-request
                               server :textDocument/codeAction
                               (list :textDocument (eglot--TextDocumentIdentifier)
                                     :range (list :start (eglot--pos-to-lsp-position (point-min))
                                                  :end (eglot--pos-to-lsp-position (point-max)))
                                     :context (list :diagnostics [])))
                              nil))
             (explain (seq-find (lambda (a) (string-prefix-p "Kimi: Explain" (plist-get a :title))) actions)))
        (unless explain (kimi-check-fail "no Kimi: Explain code action: %S" actions))
        (princ (format "ok: code actions %S\n" (mapcar (lambda (a) (plist-get a :title)) actions)))
        ;; What eglot-code-actions does for a command action.
        (let* ((command (plist-get explain :command))
               (cmd (if (stringp command) command (plist-get command :command)))
               (args (if (stringp command) (plist-get explain :arguments) (plist-get command :arguments))))
          (eglot-execute-command server cmd args))
        (kimi-check-wait "the explanation in a window/showMessage"
                         (lambda () (seq-find (lambda (m) (string-match-p "KIMI-E2E-EXPLANATION" m)) kimi-check-messages))
                         30)
        (princ "ok: explanation shown by eglot\nPASS\n")
        (kill-emacs 0)))))
