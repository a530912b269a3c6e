;;; agent-shell-check.el --- drives agent-shell against `kimi-lsp acp'  -*- lexical-binding: t; -*-

;; Run by editors/test/acp-clients.mjs in `emacs -Q --batch', which sets
;; the environment: AS_LOAD_PATH (agent-shell, acp.el, shell-maker),
;; KIMI_LSP_BIN, AS_ANSWER ("accept" or "reject"), AS_OUT, AS_BOUND_S.
;; In the workspace (the current directory): a turn that reads calc.go
;; and answers, then a turn whose answer edits it; the permission dialog's
;; View opens the diff, and its Allow or Reject key is pressed (the
;; binding of the dialog's keymap, called as a keypress calls it). What
;; the user saw goes to AS_OUT as JSON.

;;; Code:

(dolist (dir (split-string (getenv "AS_LOAD_PATH") ":" t))
  (add-to-list 'load-path dir))
(setq native-comp-jit-compilation nil)
(require 'json)
(require 'map)
(require 'agent-shell)

;; The setup of editors/README.md, with the binary built for this run.
(defun kimi-lsp-agent-config ()
  (agent-shell-make-agent-config
   :identifier 'kimi-lsp
   :mode-line-name "Kimi"
   :buffer-name "Kimi"
   :shell-prompt "Kimi> "
   :shell-prompt-regexp "Kimi> "
   :client-maker (lambda (buffer)
                   (acp-make-client :command (getenv "KIMI_LSP_BIN")
                                    :command-params '("acp" "--log-level" "warn")
                                    :context-buffer buffer))))

(defvar kimi-steps nil "What the user saw, newest first: (NAME . VALUE).")
(defvar kimi-bound (string-to-number (or (getenv "AS_BOUND_S") "60")))

(defun kimi-step (name value)
  (message "agent-shell.el: %s" name)
  (push (cons name value) kimi-steps))

(defun kimi-finish (err)
  (with-temp-file (getenv "AS_OUT")
    (insert (json-encode `((error . ,err)
                           (steps . ,(mapcar (lambda (s) `((name . ,(car s)) (value . ,(cdr s))))
                                             (reverse kimi-steps)))))))
  (kill-emacs 0))

(defun kimi-wait (what pred)
  "Run the event loop until PRED holds, at most `kimi-bound' seconds."
  (let ((deadline (+ (float-time) kimi-bound)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred)
      (error "Timed out waiting for %s" what))))

(defun kimi-text (buffer)
  "BUFFER's text as shown: invisible (collapsed) parts left out."
  (with-current-buffer buffer
    (let ((pos (point-min)) (out ""))
      (while (< pos (point-max))
        (let ((next (next-single-char-property-change pos 'invisible nil (point-max))))
          (unless (invisible-p pos)
            (setq out (concat out (buffer-substring-no-properties pos next))))
          (setq pos next)))
      out)))

(defun kimi-all-text (buffer)
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun kimi-busy (buffer)
  (with-current-buffer buffer (shell-maker-busy)))

(defun kimi-turn (shell text until)
  "Submit TEXT in SHELL and wait for UNTIL, then for the shell to be idle."
  (agent-shell-insert :text text :submit t :shell-buffer shell)
  (kimi-wait (format "the turn %S" text) until)
  (kimi-wait "the shell to be idle" (lambda () (not (kimi-busy shell)))))

(defun kimi-permission-keymap (shell)
  "The keymap of SHELL's permission dialog, and point moved to its button."
  (with-current-buffer shell
    (goto-char (point-min))
    (let ((match (text-property-search-forward 'agent-shell-permission-button t t)))
      (unless match (error "No permission button in the shell"))
      (goto-char (prop-match-beginning match))
      (or (get-text-property (point) 'keymap)
          (error "The permission button has no keymap")))))

(defun kimi-press (shell keymap key)
  "Call KEY's binding in KEYMAP at point in SHELL, as a keypress would."
  (with-current-buffer shell
    (let ((cmd (lookup-key keymap (kbd key))))
      (unless (commandp cmd) (error "No command on %s in the permission dialog" key))
      (call-interactively cmd))))

(defun kimi-run ()
  (let* ((default-directory (file-name-as-directory default-directory))
         (before (buffer-list))
         (shell nil))
    (agent-shell-start :config (kimi-lsp-agent-config))
    (setq shell (seq-find (lambda (b) (with-current-buffer b (derived-mode-p 'agent-shell-mode)))
                          (buffer-list)))
    (unless shell (error "No agent-shell buffer (buffers: %S)" (mapcar #'buffer-name (buffer-list))))
    (ignore before)
    (kimi-turn shell "KIMI-READ what does Mul in calc.go do?"
               (lambda () (string-match-p "KIMI-ANSWER" (kimi-all-text shell))))
    (kimi-step "turn1" (kimi-text shell))
    (kimi-step "turn1_all" (kimi-all-text shell))
    (with-current-buffer shell
      (let ((state (agent-shell--state)))
        (kimi-step "session" (format "%S" (map-elt state :session)))
        (kimi-step "header" (format "%s" (or header-line-format "")))
        (kimi-step "mode_line" (format-mode-line mode-line-format))))
    (agent-shell-insert :text "KIMI-EDIT please fix Mul" :submit t :shell-buffer shell)
    (kimi-wait "the permission dialog"
               (lambda () (with-current-buffer shell
                            (save-excursion
                              (goto-char (point-min))
                              (text-property-search-forward 'agent-shell-permission-button t t)))))
    (kimi-step "asking" (kimi-text shell))
    (let ((keymap (kimi-permission-keymap shell))
          (buffers (buffer-list)))
      (kimi-press shell keymap "v")
      (let ((diff (seq-find (lambda (b) (not (memq b buffers))) (buffer-list))))
        (kimi-step "diff" (if diff (kimi-all-text diff) "")))
      (let* ((tool-calls (with-current-buffer shell (map-elt (agent-shell--state) :tool-calls)))
             (call (seq-find (lambda (c) (map-elt c :permission-request-id)) (map-values tool-calls)))
             (kind (if (equal (getenv "AS_ANSWER") "accept") "allow_once" "reject_once"))
             (action (seq-find (lambda (a) (equal (map-elt a :kind) kind))
                               (map-elt call :permission-actions))))
        (kimi-step "options" (mapconcat (lambda (a) (map-elt a :label)) (map-elt call :permission-actions) ", "))
        (unless action (error "No %s option" kind))
        (kimi-step "pressed" (map-elt action :char))
        (kimi-press shell (kimi-permission-keymap shell) (map-elt action :char))))
    (kimi-wait "the shell to be idle" (lambda () (not (kimi-busy shell))))
    (kimi-step "turn2" (kimi-text shell))
    (kimi-step "turn2_all" (kimi-all-text shell))))

(condition-case err
    (progn (kimi-run) (kimi-finish nil))
  (error (kimi-finish (error-message-string err))))

;;; agent-shell-check.el ends here
