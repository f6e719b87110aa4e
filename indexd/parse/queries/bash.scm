; Bash symbols for indexd. Captures are documented in indexd/parse/code.py.

; Both `f() { ... }` and `function f { ... }`.
(function_definition name: (word) @name) @definition.function

; `readonly X=...` and `declare -r X=...` are constants.
(declaration_command
  "readonly"
  (variable_assignment name: (variable_name) @name)) @definition.constant
(declaration_command
  "declare"
  (word) @_flag
  (variable_assignment name: (variable_name) @name)
  (#match? @_flag "^-[a-zA-Z]*r")) @definition.constant

; References: `source file` / `. file` are imports, other commands are calls.
(command
  name: (command_name (word) @_cmd)
  .
  argument: [(word) (string) (raw_string) (concatenation)] @name
  (#match? @_cmd "^(source|\\.)$")) @reference.import
(command name: (command_name (word) @name)) @reference.call
