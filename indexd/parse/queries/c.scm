; C symbols for indexd. Captures are documented in indexd/parse/code.py.

; Functions: the name sits inside the declarator, possibly under pointers
; (`char *f()`, `char **f()`) or a function-pointer return type.
(function_definition
  declarator: (function_declarator
    declarator: (identifier) @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (identifier) @name))) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator
        declarator: (identifier) @name)))) @definition.function
(function_definition
  declarator: (function_declarator
    declarator: (parenthesized_declarator
      (pointer_declarator
        declarator: (function_declarator
          declarator: (identifier) @name))))) @definition.function

; Named structs/unions/enums with a body, where they stand as declarations
; (ones inside a typedef are named after the typedef instead, below).
; Queries cannot say "not inside a typedef", so the parents are listed.
(translation_unit [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(translation_unit (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_if [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_if (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_ifdef [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_ifdef (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_else [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_else (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(preproc_elif [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(preproc_elif (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(declaration_list [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(declaration_list (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(declaration type: [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(declaration type: (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
(field_declaration type: [(struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
(field_declaration type: (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)

; typedef struct {...} name_t; and typedef enum {...} name_t;
(type_definition
  type: [(struct_specifier body: (_)) (union_specifier body: (_))]
  declarator: (type_identifier) @name) @definition.struct
(type_definition
  type: (enum_specifier body: (_))
  declarator: (type_identifier) @name) @definition.enum
; Every other typedef is a type.
(type_definition
  type: [
    (primitive_type) (sized_type_specifier) (type_identifier)
    (struct_specifier !body) (union_specifier !body) (enum_specifier !body)
    (macro_type_specifier)
  ]
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (array_declarator declarator: (type_identifier) @name)
    (function_declarator
      declarator: (parenthesized_declarator
        (pointer_declarator declarator: (type_identifier) @name)))
  ]) @definition.type

; Macros, object-like and function-like.
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro

; References.
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(preproc_include path: (string_literal (string_content) @name)) @reference.import
(preproc_include path: (system_lib_string) @name) @reference.import
