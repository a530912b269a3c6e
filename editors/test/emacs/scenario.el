;;; scenario.el --- eglot with kimi-lsp, as editors/README.md sets it up  -*- lexical-binding: t; -*-
;;
;;   KIMI_SCENARIO=explain|fix|completion KIMI_FILE=greet.sh KIMI_README=editors/README.md \
;;     emacs --batch -q -l scenario.el
;;
;; Loads eglot as a user has it (Debian's elpa-eglot, or the one built into
;; Emacs 29+), evaluates the first elisp block of README's "Emacs — eglot"
;; section as an init file would (kimi-lsp found on PATH), visits FILE so
;; that the README's hook starts eglot, and plays one scenario through
;; eglot's own commands:
;;
;;   explain     M-x eglot-code-actions on a region, pick Kimi: Explain: for
;;               eglot 1.9 (no progress, no showDocument) the start notice,
;;               then the whole explanation as eglot's last message (nothing
;;               shown over it); at most 2 log lines. An eglot that declares
;;               progress or showDocument is held to what it declared (not
;;               run here: Debian 12 has 1.9).
;;   fix         the same with Kimi: Fix: eglot asks (1.9's default), applies
;;               the edit to the buffer (not the file), one undo restores it
;;   completion  type, M-x completion-at-point: Kimi's one item is offered and
;;               completes the line as the stand-in wrote it
;;
;; What a person would type is stood in for only where batch mode has no
;; keyboard: the action picked from eglot's menu (completing-read), the
;; "y" to eglot's question (y-or-n-p), and the command loop's end that runs
;; post-command-hook. Every wait polls with a generous bound (the machine
;; may be loaded). Prints "ok: ..." lines and "PASS SCENARIO" or
;; "FAIL: ...", exiting 0 or 1.

(require 'package)
(package-initialize)
(require 'eglot)
(require 'subr-x)
(require 'seq)

(defvar kimi-scenario (getenv "KIMI_SCENARIO"))
(defvar kimi-shown nil "Messages eglot showed (eglot--message), newest first.")
(defvar kimi-notes nil "Notifications eglot got from the server, newest first: (METHOD . PARAMS).")
(defvar kimi-asked nil "Questions eglot asked with y-or-n-p, newest first.")

(defun kimi-fail (fmt &rest args)
  (princ (concat "FAIL: " (apply #'format fmt args) "\n"))
  (kill-emacs 1))

(defun kimi-ok (fmt &rest args)
  (princ (concat "ok: " (apply #'format fmt args) "\n")))

(defun kimi-wait (what pred &optional seconds)
  "Poll PRED while Emacs reads the server, for up to SECONDS (default 120)."
  (let ((deadline (+ (float-time) (or seconds 120))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall pred) (kimi-fail "timed out waiting for %s" what))))

;; A loaded machine answers slowly: eglot's defaults are 10 s for a
;; request and 30 s to connect.
(setq jsonrpc-default-request-timeout 120
      eglot-connect-timeout 120)

(advice-add 'eglot--message :before
            (lambda (fmt &rest args) (push (apply #'format fmt args) kimi-shown)))
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params) (push (cons method params) kimi-notes)))
;; The user answers eglot's "Server wants to edit ... Proceed?" with y.
(advice-add 'y-or-n-p :override
            (lambda (prompt) (push prompt kimi-asked) t))

;;; The README's setup, as in an init file.
(let* ((readme (with-temp-buffer
                 (insert-file-contents (getenv "KIMI_README"))
                 (buffer-string)))
       (section (or (string-match "^## Emacs — eglot$" readme)
                    (kimi-fail "README has no \"## Emacs — eglot\" section")))
       (start (or (string-match "^```elisp\n" readme section)
                  (kimi-fail "no elisp block in README's eglot section")))
       (body-start (match-end 0))
       (end (string-match "^```$" readme body-start))
       (snippet (substring readme body-start end)))
  (with-temp-buffer
    (insert snippet)
    (goto-char (point-min))
    (condition-case err
        (while t (eval (read (current-buffer)) t))
      (end-of-file nil)
      (error (kimi-fail "README snippet: %S" err))))
  (kimi-ok "README's eglot snippet evaluated (%d lines)" (length (split-string snippet "\n" t))))

(defun kimi-server ()
  (or (eglot-current-server) (kimi-fail "eglot is not managing %s" (buffer-name))))

(defun kimi-region (first last)
  "The region from the start of line FIRST to the end of line LAST."
  (save-excursion
    (list (progn (goto-char (point-min)) (forward-line (1- first)) (point))
          (progn (goto-char (point-min)) (forward-line (1- last)) (line-end-position)))))

(defun kimi-code-action (prefix beg end)
  "M-x eglot-code-actions on BEG..END, picking the action titled PREFIX...
Returns the titles eglot offered."
  (let (offered)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt collection &rest _)
                 (setq offered (mapcar #'car collection))
                 (or (seq-find (lambda (title) (string-prefix-p prefix title)) offered)
                     (kimi-fail "no %s action among %S" prefix offered)))))
      ;; A keyboard event, as after M-x ... RET, so eglot offers its
      ;; completing-read menu rather than a mouse popup.
      (let ((last-nonmenu-event ?\r))
        (eglot-code-actions beg end nil t)))
    offered))

(defun kimi-jobs-done ()
  "Wait until kimi.stats lists no running job: every message of the jobs
has then been read (the server writes a job's last message before the job
leaves the list)."
  (kimi-wait "the job to end"
             (lambda ()
               (let ((st (jsonrpc-request (kimi-server) :workspace/executeCommand
                                          '(:command "kimi.stats"))))
                 (zerop (length (plist-get st :jobs)))))))

(defun kimi-explanation-p (m) (string-match-p "KIMI-E2E-EXPLANATION" m))

(let* ((file (getenv "KIMI_FILE"))
       (buf (find-file-noselect file)))
  (set-buffer buf)
  (unless (derived-mode-p 'sh-mode) (kimi-fail "%s opened in %s, not sh-mode" file major-mode))
  ;; find-file ran sh-mode-hook (eglot-ensure); the command loop would now
  ;; run post-command-hook, which connects.
  (run-hooks 'post-command-hook)
  (kimi-wait "eglot to connect" (lambda () (and (eglot-current-server) eglot--managed-mode)))
  (let* ((caps (eglot--capabilities (kimi-server)))
         (cmds (append (plist-get (plist-get caps :executeCommandProvider) :commands) nil)))
    (unless (member "kimi.explain" cmds)
      (kimi-fail "kimi.explain not among the server's commands: %S" cmds))
    (kimi-ok "eglot connected to %s" (plist-get (eglot--server-info (kimi-server)) :name)))
  (let ((original (buffer-string)))
    (pcase kimi-scenario
      ("explain"
       ;; What this eglot declares decides how the answer comes: eglot 1.9
       ;; declares no window capability (message path); a newer one may
       ;; declare progress and showDocument.
       (let* ((window (plist-get (eglot-client-capabilities (kimi-server)) :window))
              (progress (eq (plist-get window :workDoneProgress) t))
              (show-document (eq (plist-get (plist-get window :showDocument) :support) t)))
         (let ((offered (apply #'kimi-code-action "Kimi: Explain" (kimi-region 3 5))))
           (kimi-ok "code actions offered: %S" offered))
         (if show-document
             (kimi-wait "the explanation opened through window/showDocument"
                        (lambda ()
                          (seq-find (lambda (b)
                                      (and (string-suffix-p ".md" (or (buffer-file-name b) ""))
                                           (with-current-buffer b (kimi-explanation-p (buffer-string)))))
                                    (buffer-list))))
           (kimi-wait "the explanation in a window/showMessage"
                      (lambda () (seq-find #'kimi-explanation-p kimi-shown))))
         (kimi-jobs-done)
         (let* ((reports (seq-filter (lambda (m) (string-prefix-p "Server reports" m)) kimi-shown))
                (logs (seq-count (lambda (n) (eq (car n) 'window/logMessage)) kimi-notes)))
           (when (> logs 2)
             (kimi-fail "%d window/logMessage for one explain, want at most 2" logs))
           (unless show-document
             (unless (kimi-explanation-p (car reports))
               (kimi-fail "the last message eglot showed is not the explanation: %S" (car reports)))
             (unless (string-match-p "Server reports (type=3): Kimi: Explain — greet\\.sh\n" (car reports))
               (kimi-fail "the explanation does not name its file: %S" (car reports))))
           (unless progress
             (unless (seq-find (lambda (m) (string-match-p "Kimi: Explain: asking " m)) reports)
               (kimi-fail "no start notice among %S" reports))
             (when (assq '$/progress kimi-notes)
               (kimi-fail "$/progress sent to an eglot that declares no progress support")))
           (kimi-ok "%s; %d messages shown, %d log lines"
                    (cond (show-document "explanation opened with showDocument")
                          (progress "progress, then the explanation as the last message")
                          (t "no progress support: start notice, then the explanation last"))
                    (length reports) logs))))
      ("fix"
       (undo-boundary)
       (let ((offered (apply #'kimi-code-action "Kimi: Fix" (kimi-region 3 5))))
         (kimi-ok "code actions offered: %S" offered))
       (kimi-wait "the fix in the buffer" (lambda () (not (equal (buffer-string) original))))
       (kimi-jobs-done)
       (let ((want (replace-regexp-in-string (regexp-quote "hello $2") "hello $1" original t t)))
         (unless (equal (buffer-string) want)
           (kimi-fail "buffer after the fix:\n%s\nwant:\n%s" (buffer-string) want)))
;; eglot 1.9 asks while eglot-confirm-server-initiated-edits is
       ;; confirm (its default); newer eglot asks only in some cases.
       (when (and (eq eglot-confirm-server-initiated-edits 'confirm)
                  (not (and kimi-asked (string-match-p "greet\\.sh" (car kimi-asked)))))
         (kimi-fail "eglot did not ask before editing: %S" kimi-asked))
       (unless (equal (with-temp-buffer (insert-file-contents file) (buffer-string)) original)
         (kimi-fail "the file on disk changed before a save"))
       (kimi-ok "%s, the buffer holds the fix, the file is unchanged"
                (if kimi-asked "eglot asked" "eglot did not ask"))
       ;; The command loop ends the command: one boundary, then C-/ once.
       (undo-boundary)
       (let ((last-command nil)) (undo))
       (unless (equal (buffer-string) original)
         (kimi-fail "one undo left:\n%s" (buffer-string)))
       (kimi-ok "one undo restores the original text"))
      ("completion"
       (goto-char (point-max))
       (insert "greet ev")
       (let ((prefix (buffer-substring (line-beginning-position) (point)))
             items)
         ;; Each try asks anew (eglot caches a table's answer).
         (kimi-wait "Kimi's completion item"
                    (lambda ()
                      (let* ((capf (eglot-completion-at-point))
                             (typed (buffer-substring (nth 0 capf) (point))))
                        (setq items (all-completions typed (nth 2 capf))))))
         (let ((item (get-text-property 0 'eglot--lsp-item (car items))))
           (unless (and (= (length items) 1) (equal (plist-get item :detail) "Kimi suggestion"))
             (kimi-fail "completion items %S, want Kimi's one suggestion" items)))
         (kimi-ok "completion items after %S: %S" prefix (mapcar #'substring-no-properties items)))
       (completion-at-point)
       (let ((line (buffer-substring (line-beginning-position) (line-end-position))))
         (unless (equal line "greet everyone")
           (kimi-fail "line after completion-at-point: %S, want \"greet everyone\"" line))
         (kimi-ok "completion-at-point completed the line: %S" line)))
      (_ (kimi-fail "unknown KIMI_SCENARIO %S" kimi-scenario))))
  (princ (format "PASS %s\n" kimi-scenario))
  (kill-emacs 0))
