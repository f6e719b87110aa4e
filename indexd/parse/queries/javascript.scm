; JavaScript symbols for indexd. Captures are documented in indexd/parse/code.py.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function

(class_declaration name: (identifier) @name) @definition.class

; Methods (including getters/setters and constructors); they become methods
; because they sit inside a class.
(method_definition name: (_) @name) @definition.function

; ES5 classes: `Walker.prototype.forEach = function (cb) {...}` is a method of Walker
; (@receiver: the qualname's parent, as Go's receivers are).
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression object: (identifier) @receiver property: (property_identifier) @_proto)
      property: (property_identifier) @name)
    right: [(function_expression) (arrow_function) (generator_function)])
  (#eq? @_proto "prototype")) @definition.method

; Functions in a module-level object literal: `var posix = { resolve: function () {...} }` is
; a method of posix (Node's path module for browsers).
(program (variable_declaration
  (variable_declarator
    name: (identifier) @receiver
    value: (object (pair key: (property_identifier) @name
                         value: [(function_expression) (arrow_function) (generator_function)]) @definition.method))))
(program (lexical_declaration
  (variable_declarator
    name: (identifier) @receiver
    value: (object (pair key: (property_identifier) @name
                         value: [(function_expression) (arrow_function) (generator_function)]) @definition.method))))

; Class fields holding a function: `handle = () => {}`.
(field_definition
  property: (property_identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; const/let/var bound to an arrow function or function expression.
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; Top-level UPPER_CASE constants (plain or exported).
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      (#match? @name "^[A-Z][A-Z0-9_]*$"))) @definition.constant)
(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        (#match? @name "^[A-Z][A-Z0-9_]*$"))) @definition.constant))

; References.
(call_expression function: (identifier) @name) @reference.call
; @module: the receiver as written (`this`, `argument`, `path`): what it is decides how
; sure the graph can be of the method (graph/edges.py, _js_member_targets)
(call_expression
  function: (member_expression object: (_) @module property: (property_identifier) @name)) @reference.call
(new_expression constructor: (identifier) @name) @reference.call
(import_statement source: (string (string_fragment) @name)) @reference.import
(export_statement source: (string (string_fragment) @name)) @reference.import
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @name))
  (#eq? @_require "require")) @reference.import

; `export default` of an anonymous function or class: named "default".
(export_statement "default" @name
  value: [(function_expression !name) (generator_function !name) (arrow_function)]) @definition.function
(export_statement "default" @name value: (class !name)) @definition.class

; CommonJS: `exports.name = fn` and `module.exports.name = fn` are named by
; the property; `module.exports = function name() {}` by the function, and an
; anonymous `module.exports = fn` is "exports".
(expression_statement
  (assignment_expression
    left: (member_expression object: (identifier) @_obj property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#eq? @_obj "exports")) @definition.function
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression object: (identifier) @_mod property: (property_identifier) @_exp)
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#eq? @_mod "module") (#eq? @_exp "exports")) @definition.function
(expression_statement
  (assignment_expression
    left: (member_expression object: (identifier) @_mod property: (property_identifier) @_exp)
    right: [(function_expression name: (identifier) @name)
            (generator_function name: (identifier) @name)])
  (#eq? @_mod "module") (#eq? @_exp "exports")) @definition.function
(expression_statement
  (assignment_expression
    left: (member_expression object: (identifier) @_mod property: (property_identifier) @name)
    right: [(arrow_function) (function_expression !name) (generator_function !name)])
  (#eq? @_mod "module") (#eq? @name "exports")) @definition.function
