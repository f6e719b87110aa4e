; Python symbols for indexd. Captures are documented in indexd/parse/code.py.

(class_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc)?)) @definition.class

(function_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc)?)) @definition.function

; Module-level UPPER_CASE assignments are constants.
(module
  (expression_statement
    (assignment
      left: (identifier) @name
      (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant))

(call function: (identifier) @name) @reference.call
; a method call keeps its receiver as written (self, cls, super(), a module, a chain)
(call function: (attribute object: (_) @module attribute: (identifier) @name)) @reference.call
(import_statement name: (dotted_name) @name) @reference.import
(import_statement name: (aliased_import name: (dotted_name) @name)) @reference.import
(import_from_statement module_name: (_) @name) @reference.import
