; C++ symbols for indexd. Captures are documented in indexd/parse/code.py.
; (Written out long-hand: queries have no recursion, so declarator shapes are
; spelled out to a fixed depth.)

; Function definitions. The name sits in the declarator, possibly under a
; pointer/reference. (Alternations are never nested directly in one another:
; tree-sitter drops branches of such nests.)
(function_definition
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
  ]) @definition.function
(function_definition
  declarator: (function_declarator
    declarator: (parenthesized_declarator
      (pointer_declarator
        declarator: (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))))) @definition.function

; Out-of-class definitions `void a::Foo::bar()` are methods that take the
; innermost scope (`Foo`) as their parent, so the qualname is `Foo.bar`.
(function_definition
  declarator: [
    (function_declarator declarator: [
      (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier
        name: (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
      (qualified_identifier
        name: (qualified_identifier
          name: (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)))
    ])
    (pointer_declarator declarator: (function_declarator declarator: [
      (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier
        name: (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
      (qualified_identifier
        name: (qualified_identifier
          name: (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)))
    ]))
    (reference_declarator (function_declarator declarator: [
      (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier
        name: (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
      (qualified_identifier
        name: (qualified_identifier
          name: (qualified_identifier scope: [(namespace_identifier) @receiver (type_identifier) @receiver (template_type name: (type_identifier) @receiver)] name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)))
    ]))
  ]) @definition.method

; Method declarations inside a class body (where their docs usually live).
(field_declaration
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
  ]) @definition.function
(field_declaration_list
  (declaration declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
  ]) @definition.function)

; Classes, structs, unions and enums with a body, where they stand as
; declarations. Queries cannot say "not inside a typedef", so the parents
; are listed; typedef'd ones are named after the typedef below.
(translation_unit (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(translation_unit [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(translation_unit (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_if (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(preproc_if [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_if (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_ifdef (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(preproc_ifdef [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_ifdef (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_else (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(preproc_else [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_else (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_elif (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(preproc_elif [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_elif (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(declaration_list (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(declaration_list [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(declaration_list (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(template_declaration (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(template_declaration [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(template_declaration (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(declaration type: (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(declaration type: [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(declaration type: (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(field_declaration type: (class_specifier name: (type_identifier) @name body: (_)) @definition.class)
(field_declaration type: [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(field_declaration type: (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace

; typedef struct {...} name_t; and typedef enum {...} name_t;
(type_definition
  type: [(struct_specifier body: (_)) (union_specifier body: (_)) (class_specifier body: (_))]
  declarator: (type_identifier) @name) @definition.struct
(type_definition
  type: (enum_specifier body: (_))
  declarator: (type_identifier) @name) @definition.enum
; Every other typedef, and `using X = ...`, is a type.
(type_definition
  type: [
    (primitive_type) (sized_type_specifier) (type_identifier) (qualified_identifier)
    (template_type) (struct_specifier !body) (union_specifier !body)
    (enum_specifier !body) (class_specifier !body)
  ]
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (function_declarator
      declarator: (parenthesized_declarator
        (pointer_declarator declarator: (type_identifier) @name)))
  ]) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type

; Macros, object-like and function-like.
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro

; References.
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(call_expression
  function: (template_function name: (identifier) @name)) @reference.call
(call_expression
  function: (qualified_identifier
    name: (template_function name: (identifier) @name))) @reference.call
(new_expression type: (type_identifier) @name) @reference.call
(preproc_include path: (string_literal (string_content) @name)) @reference.import
(preproc_include path: (system_lib_string) @name) @reference.import
