/**
 * Data flow for Java: what reaches a sink, read from the method (or lambda, constructor,
 * initializer) that encloses it, then the fields of the enclosing classes.
 *
 * Java-specific choices, each because of what an injection can and cannot carry:
 * - A value whose declared type is numeric or boolean (`int limit`, `Long id`, `args.length`,
 *   `Integer.parseInt(s)`, `a < b`) counts as constant with text `0`: it cannot carry SQL or shell
 *   syntax, whatever its value.
 * - Argument vectors (`new String[]{"sh", "-c", cmd}`, `List.of(...)`, a list filled with `add`,
 *   the arguments of `new ProcessBuilder(...)`) have as text their elements joined by
 *   ELEMENT_SEPARATOR, so a command rule can tell `{"git", "clone", url}` (a fixed program) from
 *   `"sh -c " + x` or `{"sh", "-c", x}`.
 * - A local StringBuilder/StringJoiner/list is the join of its initial value and every
 *   `append`/`insert`/`add`/`addAll` on it in the function; handed to another method as a
 *   statement (`addFilters(sql, form);`) it may have been written there, so it is dynamic.
 * - `Collections.nCopies(n, "?")` and `"?".repeat(n)` read as their element: a repetition count
 *   carries no data (placeholder lists for `IN (...)`).
 *
 * The work is linear in a file's sinks: identifiers are indexed by name once per parse, a name's
 * binders and writes are found from its own occurrences and grouped by owning scope once, a
 * class body's written fields are collected once, and a name's shape found without a cutoff is
 * remembered for the parse. Searching a scope (or a class body) per name made it quadratic.
 */
import type { SgNode } from '@ast-grep/napi';
import type { Steps } from '../../../core/cooperative';
import { findAllSliced } from '../find-sliced';
import { callersReaching } from './java-callers';
import {
  constantShape,
  DYNAMIC,
  dynamicShape,
  type FlowLanguage,
  joinShapes,
  resolutionWork,
  type ValueShape,
} from './types';

/** Joins the elements of an argument vector or list in a shape's text. */
export const ELEMENT_SEPARATOR = '\u0001';

/** A shape, plus the elements when the value is an array or list (and its joiner, if any). */
interface Shape extends ValueShape {
  elements?: Shape[];
  /** The separator a StringJoiner puts between its elements when it becomes a string. */
  separator?: string;
}

const MAX_DEPTH = 20;

const NUMBER_LITERALS = new Set([
  'decimal_integer_literal',
  'hex_integer_literal',
  'octal_integer_literal',
  'binary_integer_literal',
  'decimal_floating_point_literal',
  'hex_floating_point_literal',
]);
const SCOPE_KINDS = new Set([
  'method_declaration',
  'constructor_declaration',
  'compact_constructor_declaration',
  'lambda_expression',
  'static_initializer',
]);
const CLASS_BODY_KINDS = new Set(['class_body', 'interface_body', 'enum_body', 'enum_body_declarations']);
/** Binders that take whatever the code hands them at runtime. */
const RUNTIME_BINDERS = new Set([
  'catch_formal_parameter',
  'instanceof_expression',
  'type_pattern',
  'record_pattern_component',
]);
/** Boxed and value types whose text is digits, a boolean or hex: nothing that can break out of SQL or a shell. */
const NUMERIC_TYPES = new Set([
  'Integer',
  'Long',
  'Short',
  'Byte',
  'Double',
  'Float',
  'Boolean',
  'BigDecimal',
  'BigInteger',
  'UUID',
  'AtomicInteger',
  'AtomicLong',
]);
/** Classes every static method of which returns a number, a boolean or its digits. */
const NUMERIC_CLASSES = /^(java\.lang\.)?(Integer|Long|Short|Byte|Double|Float|Boolean|Math|StrictMath)$/;
/** Methods that return a number or a boolean on any receiver. */
const NUMERIC_METHODS =
  /^(length|size|count|ordinal|hashCode|indexOf|lastIndexOf|compareTo|compareToIgnoreCase|equals|equalsIgnoreCase|isEmpty|isBlank|contains|containsKey|startsWith|endsWith|matches|intValue|longValue|doubleValue|getAsInt|getAsLong)$/;
/** Methods that return their receiver's text, reshaped but not extended. */
const TRANSPARENT_METHODS =
  /^(toString|trim|strip|stripLeading|stripTrailing|stripIndent|toUpperCase|toLowerCase|intern|repeat|getBytes|toCharArray|toArray|chars)$/;
const MUTATORS = new Set(['append', 'insert', 'add', 'addAll', 'addLast', 'addFirst', 'push']);
const STRING_BUILDERS = /^(StringBuilder|StringBuffer)$/;
const LISTS = /^(ArrayList|LinkedList|Vector|ArrayDeque|LinkedHashSet|HashSet|TreeSet)$/;
const ALL_CAPS = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;
const FORMAT_SPEC = /%(\d+\$)?[-#+ 0,(<]*\d*(\.\d+)?([a-zA-Z%])/g;
const NUMERIC_CONVERSIONS = /^[dxXoeEfgGaAbBhH]$/;

interface Context {
  depth: number;
  /** Bindings being resolved (scope or field ids with the name): a name reached again adds nothing. */
  visiting: Set<string>;
  /** The node the rule asked about: its own call does not count as handing a builder elsewhere. */
  sink: SgNode;
  tree: TreeIndex;
  /**
   * Cycles met, depth limits hit and answers that depend on the use or the sink, so far (one
   * counter for the whole question): a name resolved without one is remembered for the parse.
   */
  cutoffs: { count: number };
  /** Parameters the value was found to depend on: what callers pass there reaches it (./java-callers.ts). */
  parameters: ParameterRef[];
  /** The innermost expressions found not constant: where the value's data comes in (`sourcesOf`). */
  sources: SgNode[];
}

/** Sources remembered with one name: enough to find a changed line among them. */
const MAX_SOURCES = 16;
/** Expressions that can be where data comes in (not the operators that join it). */
const SOURCE_KINDS = new Set([
  'method_invocation',
  'field_access',
  'identifier',
  'array_access',
  'object_creation_expression',
]);

/**
 * What the tree says about names, kept per parse: the engine asks about every match of a file,
 * and each answer walks the same scopes and class bodies.
 */
interface TreeIndex {
  /** Identifier nodes by name, from one search of the file (`prepare`); null until made. */
  identifiers: Map<string, SgNode[]> | null;
  /** Whether a scope declares a name, by `<scope id>:<name>`. */
  declares: Map<string, boolean>;
  /** Per name, the ids of the scopes whose binders (not parameters) declare it. */
  declaringScopes: Map<string, Set<number>>;
  /** Per name, what each scope owning some of its binders and writes does to it, by scope id. */
  owned: Map<string, Map<number, Bindings>>;
  /** A scope's bindings of a name, by `<scope id>:<name>`. */
  bindings: Map<string, Bindings | null>;
  /** A class body's fields, enum constants and record components by name, by body id. */
  fields: Map<number, Map<string, SgNode>>;
  /** The names a class body assigns, updates or mutates (`x = `, `this.x++`, `x.add(...)`), by body id. */
  written: Map<number, Set<string>>;
  /**
   * Shapes of bindings and fields (the keys `guarded` uses) resolved without a cutoff, with the
   * depth they were resolved at: the same answer holds from there or shallower.
   */
  resolved: Map<string, { shape: Shape; depth: number; parameters: ParameterRef[]; sources: SgNode[] }>;
  /** The file's methods by name, from one search; null until made. */
  methods: Map<string, SgNode[]> | null;
  /** A method's own `return` statements (not those of lambdas in it), by its id. */
  returns: Map<number, SgNode[]>;
}

/** A method's (or lambda's, constructor's) parameter a value depends on: `cmd` of `void run(String cmd)`. */
export interface ParameterRef {
  /** The scope whose parameter it is. */
  fn: SgNode;
  name: string;
}

const indexes = new WeakMap<object, TreeIndex>();

function indexFor(parse: object | undefined): TreeIndex {
  let index = parse ? indexes.get(parse) : undefined;
  if (!index) {
    index = {
      identifiers: null,
      declares: new Map(),
      declaringScopes: new Map(),
      owned: new Map(),
      bindings: new Map(),
      fields: new Map(),
      written: new Map(),
      resolved: new Map(),
      methods: null,
      returns: new Map(),
    };
    if (parse) indexes.set(parse, index);
  }
  return index;
}

const IDENTIFIER_RULE = { rule: { kind: 'identifier' } };

/** Indexes the file's identifiers by name in one search, yielding when `yieldNow` says so. */
function* prepareIndex(root: SgNode, index: TreeIndex, yieldNow: () => boolean): Steps<void> {
  if (index.identifiers) return;
  const found = yield* findAllSliced(root, IDENTIFIER_RULE, yieldNow);
  const identifiers = new Map<string, SgNode[]>();
  for (const [i, node] of found.entries()) {
    resolutionWork.visits++;
    const name = node.text();
    const list = identifiers.get(name);
    if (list) list.push(node);
    else identifiers.set(name, [node]);
    if (i % 1000 === 999 && yieldNow()) yield;
  }
  index.identifiers = identifiers;
}

function identifiersNamed(name: string, from: SgNode, index: TreeIndex): SgNode[] {
  if (index.identifiers) return index.identifiers.get(name) ?? [];
  // Not prepared (a single question, as in tests): search the file for this one name.
  return from
    .getRoot()
    .root()
    .findAll({ rule: { kind: 'identifier', regex: exactly(name) } });
}

function memo<K, V>(map: Map<K, V>, key: K, compute: () => V): V {
  if (map.has(key)) return map.get(key) as V;
  const value = compute();
  map.set(key, value);
  return value;
}

const constant = (text: string): Shape => constantShape(text);
const dynamic = (): Shape => dynamicShape(DYNAMIC);
const NUMERIC: Shape = constantShape('0');

const join = (parts: Shape[]): Shape => joinShapes(parts);

function vector(elements: Shape[], separator?: string): Shape {
  return {
    constant: elements.every((e) => e.constant),
    text: elements.map((e) => e.text).join(ELEMENT_SEPARATOR),
    elements,
    ...(separator === undefined ? {} : { separator }),
  };
}

/** A value used as a string: a StringJoiner joins its elements, anything else keeps its text. */
function asString(shape: Shape): Shape {
  if (!shape.elements || shape.separator === undefined) return shape;
  return { constant: shape.constant, text: shape.elements.map((e) => e.text).join(shape.separator) };
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', s: ' ', '0': '\0' };

function unescapeJava(text: string): string {
  return text.replace(/\\(u+[0-9a-fA-F]{4}|[0-7]{1,3}|.)/gs, (_, e: string) => {
    if (e.startsWith('u')) return String.fromCharCode(Number.parseInt(e.replace(/^u+/, ''), 16));
    if (/^[0-7]+$/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
    return ESCAPES[e] ?? e;
  });
}

/** A node's kind as a plain string (the napi types narrow it to the grammars it knows). */
const kindOf = (node: SgNode): string => node.kind() as string;
const argumentsOf = (call: SgNode): SgNode[] => call.field('arguments')?.namedChildren() ?? [];
const typeName = (type: SgNode | null) => type?.text().replace(/<.*$/s, '').replace(/^.*\./, '') ?? '';

function isNumericType(type: SgNode | null): boolean {
  if (!type) return false;
  const kind = kindOf(type);
  if (kind === 'integral_type') return type.text() !== 'char';
  if (kind === 'floating_point_type' || kind === 'boolean_type') return true;
  return kind === 'type_identifier' && NUMERIC_TYPES.has(type.text());
}

function isScope(node: SgNode): boolean {
  const kind = kindOf(node);
  // An instance initializer is a bare block in a class body.
  return SCOPE_KINDS.has(kind) || (kind === 'block' && node.parent()?.kind() === 'class_body');
}

function nearestScope(node: SgNode): SgNode | null {
  for (const a of node.ancestors()) {
    if (isScope(a)) return a;
    if (CLASS_BODY_KINDS.has(kindOf(a))) return null;
  }
  return null;
}

const sameNode = (a: SgNode | null, b: SgNode | null) => a !== null && b !== null && a.id() === b.id();

/** The parameters a scope declares, as [name node, type node | null] pairs. */
function parametersOf(scope: SgNode): [SgNode, SgNode | null][] {
  const params = scope.field('parameters');
  if (!params) return [];
  if (params.kind() === 'identifier') return [[params, null]];
  const out: [SgNode, SgNode | null][] = [];
  for (const p of params.namedChildren()) {
    if (p.kind() === 'identifier') out.push([p, null]);
    else if (p.kind() === 'formal_parameter') {
      const name = p.field('name');
      if (name) out.push([name, p.field('type')]);
    } else if (p.kind() === 'spread_parameter') {
      const name = p.find({ rule: { kind: 'variable_declarator' } })?.field('name');
      if (name) out.push([name, null]);
    }
  }
  return out;
}

/** Everything in `scope` that binds or changes `name`, owned by that scope (not a nested redeclaration). */
interface Bindings {
  parameter: SgNode | null;
  declarators: SgNode[];
  /** catch parameters, patterns, for-each variables and try resources. */
  binders: SgNode[];
  assignments: SgNode[];
  /** `name.append(x)`, `name.add(x)`, `Collections.addAll(name, ...)`, `name[i] = x`, in source order. */
  mutations: SgNode[];
  /** Statement calls that receive the name as an argument. */
  handedTo: SgNode[];
}

function bindingName(node: SgNode): string | null {
  const kind = kindOf(node);
  if (kind === 'variable_declarator') {
    const parent = node.parent()?.kind();
    return parent === 'local_variable_declaration' ? (node.field('name')?.text() ?? null) : null;
  }
  if (kind === 'enhanced_for_statement' || kind === 'resource' || RUNTIME_BINDERS.has(kind))
    return node.field('name')?.text() ?? null;
  return null;
}

const declaresDirectly = (scope: SgNode, name: string, ctx: Context) =>
  memo(ctx.tree.declares, `${scope.id()}:${name}`, () => scopeDeclares(scope, name, ctx));

function scopeDeclares(scope: SgNode, name: string, ctx: Context): boolean {
  if (parametersOf(scope).some(([n]) => n.text() === name)) return true;
  let scopes = ctx.tree.declaringScopes.get(name);
  if (!scopes) {
    scopes = new Set();
    for (const binder of bindersOf(name, scope, ctx)) {
      const owner = nearestScope(binder);
      if (owner) scopes.add(owner.id());
    }
    ctx.tree.declaringScopes.set(name, scopes);
  }
  return scopes.has(scope.id());
}

/** The nodes binding `name` (local declarators, loop variables, resources, catch parameters, patterns), in source order. */
function bindersOf(name: string, from: SgNode, ctx: Context): SgNode[] {
  const out: SgNode[] = [];
  for (const occurrence of identifiersNamed(name, from, ctx.tree)) {
    const parent = occurrence.parent();
    if (parent && sameNode(parent.field('name'), occurrence) && bindingName(parent) === name)
      out.push(parent);
  }
  return out;
}

/** `name` in a regex (Java names may hold `$`). */
const escaped = (name: string) => name.replace(/\$/g, '\\$');
const exactly = (name: string) => `^${escaped(name)}$`;

/** The scope that binds `name` as seen from `node`: the first enclosing scope declaring it. */
function owningScope(node: SgNode, name: string, ctx: Context): SgNode | null {
  for (const a of node.ancestors()) {
    if (CLASS_BODY_KINDS.has(kindOf(a))) return null;
    if (isScope(a) && declaresDirectly(a, name, ctx)) return a;
  }
  return null;
}

/** The identifier a chain of mutator calls starts from: `sb` in `sb.append(a).append(b)`. */
function chainRoot(call: SgNode): SgNode | null {
  let object = call.field('object');
  while (object?.kind() === 'method_invocation' && MUTATORS.has(object.field('name')?.text() ?? ''))
    object = object.field('object');
  return object;
}

const bindingsOf = (scope: SgNode, name: string, ctx: Context) =>
  memo(ctx.tree.bindings, `${scope.id()}:${name}`, () => collectBindings(scope, name, ctx));

function collectBindings(scope: SgNode, name: string, ctx: Context): Bindings | null {
  const parameter = parametersOf(scope).find(([n]) => n.text() === name);
  const owned = memo(ctx.tree.owned, name, () => bindingsByScope(name, scope, ctx)).get(scope.id());
  const found: Bindings = {
    ...(owned ?? emptyBindings()),
    parameter: parameter ? (parameter[0].parent() ?? parameter[0]) : null,
  };
  const bound = found.parameter !== null || found.declarators.length > 0 || found.binders.length > 0;
  return bound ? found : null;
}

const emptyBindings = (): Bindings => ({
  parameter: null,
  declarators: [],
  binders: [],
  assignments: [],
  mutations: [],
  handedTo: [],
});

/**
 * Everything that binds, writes or hands on `name`, by the scope that owns it. The candidates
 * are found from the name's own occurrences (its binder, the assignment it is the target of, the
 * mutator chain it starts, the call it is an argument of) rather than by searching each scope.
 */
function bindingsByScope(name: string, from: SgNode, ctx: Context): Map<number, Bindings> {
  const byScope = new Map<number, Bindings>();
  const of = (scope: SgNode | null) => {
    if (!scope) return null;
    const known = byScope.get(scope.id());
    if (known) return known;
    const found = emptyBindings();
    byScope.set(scope.id(), found);
    return found;
  };
  const seen = new Set<number>();
  for (const occurrence of identifiersNamed(name, from, ctx.tree)) {
    for (const node of touchedBy(occurrence)) {
      if (seen.has(node.id())) continue;
      seen.add(node.id());
      resolutionWork.visits++;
      const kind = kindOf(node);
      if (bindingName(node) === name) {
        const found = of(nearestScope(node));
        found?.[kind === 'variable_declarator' ? 'declarators' : 'binders'].push(node);
      } else if (kind === 'assignment_expression') {
        const left = node.field('left');
        const target = left?.kind() === 'array_access' ? left.field('array') : left;
        if (target?.kind() !== 'identifier' || target.text() !== name) continue;
        of(owningScope(node, name, ctx))?.[
          left?.kind() === 'array_access' ? 'mutations' : 'assignments'
        ].push(node);
      } else if (kind === 'method_invocation' || kind === 'object_creation_expression') {
        const method = node.field('name')?.text() ?? '';
        const root = kind === 'method_invocation' ? chainRoot(node) : null;
        const owner = owningScope(node, name, ctx);
        if (MUTATORS.has(method) && root?.kind() === 'identifier' && root.text() === name && owner) {
          of(owner)?.mutations.push(node);
          continue;
        }
        const passed = argumentsOf(node).some((a) => a.kind() === 'identifier' && a.text() === name);
        if (!passed || !owner) continue;
        if (method === 'addAll' && node.field('object')?.text() === 'Collections')
          of(owner)?.mutations.push(node);
        else if (node.parent()?.kind() === 'expression_statement') of(owner)?.handedTo.push(node);
      }
    }
  }
  return byScope;
}

/**
 * The nodes an occurrence of a name may bind, write or hand it on through: its binder, the
 * assignment whose target it is (or whose target array it is), every call of the mutator chain
 * it starts (`sb.append(a).append(b)`), and the call it is an argument of.
 */
function touchedBy(occurrence: SgNode): SgNode[] {
  const parent = occurrence.parent();
  if (!parent) return [];
  const out: SgNode[] = [];
  if (sameNode(parent.field('name'), occurrence)) out.push(parent);
  const kind = kindOf(parent);
  if (kind === 'assignment_expression' && sameNode(parent.field('left'), occurrence)) out.push(parent);
  if (kind === 'array_access' && sameNode(parent.field('array'), occurrence)) {
    const assignment = parent.parent();
    if (assignment?.kind() === 'assignment_expression' && sameNode(assignment.field('left'), parent))
      out.push(assignment);
  }
  if (kind === 'method_invocation' && sameNode(parent.field('object'), occurrence)) {
    // Up the chain while each call is a mutator: a call past a non-mutator has another root.
    for (let call: SgNode | null = parent; call; ) {
      out.push(call);
      if (!MUTATORS.has(call.field('name')?.text() ?? '')) break;
      const up: SgNode | null = call.parent();
      call = up?.kind() === 'method_invocation' && sameNode(up.field('object'), call) ? up : null;
    }
  }
  if (kind === 'argument_list') {
    const call = parent.parent();
    const callKind = call ? kindOf(call) : '';
    if (call && (callKind === 'method_invocation' || callKind === 'object_creation_expression'))
      out.push(call);
  }
  return out;
}

/** Source order of writes; a chained call (`sb.append(a).append(b)`) is placed by its arguments. */
const byPosition = (a: SgNode, b: SgNode) => {
  const at = (n: SgNode) => (n.field('arguments') ?? n).range().start.index;
  return at(a) - at(b);
};

function isMutableInitializer(value: SgNode | null): boolean {
  if (!value) return false;
  const kind = kindOf(value);
  if (kind === 'array_creation_expression' || kind === 'array_initializer') return true;
  if (kind !== 'object_creation_expression') return false;
  const type = typeName(value.field('type'));
  return STRING_BUILDERS.test(type) || LISTS.test(type) || type === 'StringJoiner';
}

/** What a local name holds, from everything its scope does to it. */
function shapeOfBindings(b: Bindings, ctx: Context & { use: SgNode }): Shape {
  if (b.parameter) return isNumericType(b.parameter.field('type')) ? NUMERIC : dynamic();
  const declarator = b.declarators[0];
  const declaredType = declarator?.parent()?.field('type') ?? null;
  if (isNumericType(declaredType)) return NUMERIC;
  // Loop variables and catch parameters of one name in sibling statements: the one around the use.
  // Which of several binders depends on the use: an answer that is not the same for every use.
  if (b.binders.length > 1) ctx.cutoffs.count++;
  const binder = b.binders.find((n) => contains(n, ctx.use)) ?? b.binders[0];
  if (binder) {
    if (binder.kind() === 'enhanced_for_statement') {
      if (isNumericType(binder.field('type'))) return NUMERIC;
      const over = shapeIn(binder.field('value'), ctx);
      const first = over.elements?.[0];
      return over.elements && first ? { constant: over.constant, text: first.text } : dynamic();
    }
    if (binder.kind() === 'resource') return shapeIn(binder.field('value'), ctx);
    return dynamic();
  }
  // Sibling blocks may each declare the name: the first initializer gives the text, all must be constant.
  const [initializer = null, ...otherInitializers] = b.declarators
    .map((d) => d.field('value'))
    .filter((v): v is SgNode => v !== null);
  let shape: Shape | null = initializer ? shapeIn(initializer, ctx) : null;
  let allConstant = (shape?.constant ?? true) && otherInitializers.every((v) => shapeIn(v, ctx).constant);
  for (const w of [...b.assignments].sort(byPosition)) {
    resolutionWork.visits++;
    const operator = w.field('operator')?.text();
    const right = shapeIn(w.field('right'), ctx);
    allConstant &&= right.constant;
    if (operator === '+=' && shape) shape = join([asString(shape), asString(right)]);
    else if (operator === '=' && !shape) shape = right;
  }
  if (!shape) return dynamic();
  for (const m of [...b.mutations].sort(byPosition)) {
    resolutionWork.visits++;
    const added = mutationShape(m, ctx);
    allConstant &&= added.constant;
    shape = shape.elements
      ? vector([...shape.elements, ...(added.elements ?? [added])], shape.separator)
      : join([shape, asString(added)]);
  }
  const mutable = isMutableInitializer(initializer);
  // Whether it is handed elsewhere depends on the sink: an answer that is not the same for every sink.
  if (mutable && b.handedTo.length > 0) ctx.cutoffs.count++;
  if (mutable && b.handedTo.some((call) => !contains(call, ctx.sink))) return { ...shape, constant: false };
  return { ...shape, constant: allConstant && shape.constant };
}

function contains(outer: SgNode, inner: SgNode): boolean {
  const o = outer.range();
  const i = inner.range();
  return o.start.index <= i.start.index && i.end.index <= o.end.index;
}

/** What one mutation adds: the appended value, the added elements, the assigned element. */
function mutationShape(m: SgNode, ctx: Context): Shape {
  if (m.kind() === 'assignment_expression') return shapeIn(m.field('right'), ctx);
  const args = argumentsOf(m);
  const method = m.field('name')?.text();
  if (method === 'addAll' && m.field('object')?.text() === 'Collections')
    return vector(args.slice(1).map((a) => shapeIn(a, ctx)));
  const last = args[args.length - 1];
  if (!last) return constant('');
  const value = shapeIn(last, ctx);
  if (method === 'addAll') return value.elements ? vector(value.elements) : dynamic();
  // `insert(0, x)` and `add(0, x)` put x at an index: kept as an addition (its order is not tracked).
  return value;
}

/** The members of a class body that a bare name can mean: fields, enum constants, record components. */
function membersOf(body: SgNode): Map<string, SgNode> {
  const members = new Map<string, SgNode>();
  const record = body.parent();
  if (record?.kind() === 'record_declaration')
    for (const [name] of parametersOf(record)) members.set(name.text(), name.parent() ?? name);
  for (const member of body.children()) {
    const kind = kindOf(member);
    if (kind === 'enum_constant') {
      const name = member.field('name')?.text();
      if (name) members.set(name, member);
    }
    if (kind !== 'field_declaration' && kind !== 'constant_declaration') continue;
    for (const d of member.fieldChildren('declarator')) {
      const name = d.field('name')?.text();
      if (name) members.set(name, d);
    }
  }
  return members;
}

const fieldIn = (body: SgNode, name: string, ctx: Context) =>
  memo(ctx.tree.fields, body.id(), () => membersOf(body)).get(name) ?? null;

const hasModifier = (declaration: SgNode | null, modifier: string) =>
  declaration
    ?.children()
    .some((c) => c.kind() === 'modifiers' && c.children().some((m) => m.text() === modifier)) ?? false;

/** What a field holds: a final or never-reassigned private field is its initializer. */
function shapeOfField(declarator: SgNode, body: SgNode, ctx: Context): Shape {
  const name = declarator.field('name')?.text() ?? '';
  if (declarator.kind() === 'enum_constant') return constant(name);
  if (declarator.kind() === 'formal_parameter')
    return isNumericType(declarator.field('type')) ? NUMERIC : dynamic();
  const declaration = declarator.parent();
  if (isNumericType(declaration?.field('type') ?? null)) return NUMERIC;
  const value = declarator.field('value');
  const isConstant = declaration?.kind() === 'constant_declaration' || hasModifier(declaration, 'final');
  if (isConstant) return value ? shapeIn(value, ctx) : ALL_CAPS.test(name) ? constant(name) : dynamic();
  if (!value || !hasModifier(declaration, 'private')) return dynamic();
  return memo(ctx.tree.written, body.id(), () => writtenIn(body)).has(name) ? dynamic() : shapeIn(value, ctx);
}

const WRITES = {
  rule: {
    any: [
      { kind: 'assignment_expression' },
      { kind: 'update_expression' },
      { kind: 'method_invocation', has: { field: 'name', regex: `^(${[...MUTATORS].join('|')})$` } },
    ],
  },
};

/** The names `body` writes: assignment targets, updated names, mutated objects (`x` or `this.x`), searched once. */
function writtenIn(body: SgNode): Set<string> {
  const names = new Set<string>();
  const add = (target: SgNode | null) => {
    const text = target?.text() ?? '';
    names.add(text);
    if (text.startsWith('this.')) names.add(text.slice('this.'.length));
  };
  for (const write of body.findAll(WRITES)) {
    resolutionWork.visits++;
    const kind = kindOf(write);
    if (kind === 'assignment_expression') add(write.field('left'));
    else if (kind === 'update_expression') for (const child of write.children()) add(child);
    else add(write.field('object'));
  }
  return names;
}

/** Resolves a name: enclosing scopes innermost first, then the fields of enclosing classes. */
function resolveName(node: SgNode, ctx: Context, fieldsOnly = false): Shape {
  const name = node.kind() === 'field_access' ? (node.field('field')?.text() ?? '') : node.text();
  for (const a of node.ancestors()) {
    if (!fieldsOnly && isScope(a)) {
      const bindings = bindingsOf(a, name, ctx);
      if (bindings)
        return guarded(`${a.id()}:${name}`, ctx, () => {
          if (bindings.parameter && !isNumericType(bindings.parameter.field('type')))
            ctx.parameters.push({ fn: a, name });
          return shapeOfBindings(bindings, { ...ctx, use: node });
        });
    }
    if (CLASS_BODY_KINDS.has(kindOf(a))) {
      const field = fieldIn(a, name, ctx);
      if (field) return guarded(`${field.id()}:${name}`, ctx, () => shapeOfField(field, a, ctx));
    }
  }
  return ALL_CAPS.test(name) && name.length > 1 ? constant(name) : dynamic();
}

/** Runs `resolve` unless `key` is already being resolved: a value reached from itself adds nothing. */
function guarded(key: string, ctx: Context, resolve: () => Shape): Shape {
  if (ctx.visiting.has(key)) {
    ctx.cutoffs.count++;
    return constant('');
  }
  const known = ctx.tree.resolved.get(key);
  if (known && ctx.depth <= known.depth) {
    ctx.parameters.push(...known.parameters);
    ctx.sources.push(...known.sources);
    return known.shape;
  }
  const cutoffsBefore = ctx.cutoffs.count;
  const parametersBefore = ctx.parameters.length;
  const sourcesBefore = ctx.sources.length;
  ctx.visiting.add(key);
  try {
    const shape = resolve();
    // Met no cycle, no depth limit and nothing that depends on the use or the sink: the same answer anywhere.
    if (ctx.cutoffs.count === cutoffsBefore)
      ctx.tree.resolved.set(key, {
        shape,
        depth: ctx.depth,
        // Once each: a name written a thousand times from one parameter depends on it once.
        parameters: uniqueParameters(ctx.parameters.slice(parametersBefore)),
        sources: ctx.sources.slice(sourcesBefore, sourcesBefore + MAX_SOURCES),
      });
    return shape;
  } finally {
    ctx.visiting.delete(key);
  }
}

function fieldAccess(node: SgNode, ctx: Context): Shape {
  const object = node.field('object');
  const field = node.field('field')?.text() ?? '';
  if (field === 'length') return NUMERIC;
  if (object?.kind() === 'this') return resolveName(node, ctx, true);
  return ALL_CAPS.test(field) ? constant(field) : dynamic();
}

function stringLiteral(node: SgNode, ctx: Context): Shape {
  const parts: Shape[] = [];
  for (const child of node.children()) {
    const kind = kindOf(child);
    if (kind === 'string_fragment') parts.push(constant(child.text()));
    else if (kind === 'multiline_string_fragment')
      parts.push(constant(child.text().replace(/^[ \t]*\r?\n/, '')));
    else if (kind === 'escape_sequence') parts.push(constant(unescapeJava(child.text())));
    else if (kind === 'string_interpolation') parts.push(shapeIn(child.namedChildren()[0] ?? null, ctx));
  }
  return join(parts);
}

/** `String.format`/`formatted`: the format's text with each specifier replaced by its argument. */
function format(fmt: Shape, args: Shape[]): Shape {
  let next = 0;
  let fixed = fmt.constant;
  const text = fmt.text.replace(
    FORMAT_SPEC,
    (_spec, position: string | undefined, _precision, conversion: string) => {
      if (conversion === '%') return '%';
      if (conversion === 'n') return '\n';
      const arg = args[position ? Number.parseInt(position, 10) - 1 : next++] ?? dynamic();
      // Numeric conversions print digits (or a boolean, a hash) whatever the argument is.
      if (NUMERIC_CONVERSIONS.test(conversion)) return '0';
      fixed &&= arg.constant;
      return asString(arg).text;
    },
  );
  return { constant: fixed, text };
}

function invocation(node: SgNode, ctx: Context): Shape {
  const method = node.field('name')?.text() ?? '';
  const object = node.field('object');
  const owner = object?.text() ?? '';
  const args = argumentsOf(node);
  const shapes = () => args.map((a) => shapeIn(a, ctx));
  if (object && NUMERIC_CLASSES.test(owner)) return NUMERIC;
  if (owner === 'String' || owner === 'java.lang.String') {
    if (method === 'format') {
      const all = shapes();
      // String.format(Locale, fmt, args...)
      const skip = args[0] && /Locale\b/.test(args[0].text()) ? 1 : 0;
      return format(asString(all[skip] ?? dynamic()), all.slice(skip + 1));
    }
    if (method === 'valueOf' || method === 'copyValueOf') return asString(shapeIn(args[0] ?? null, ctx));
    if (method === 'join') return joinWith(shapes());
  }
  if (owner === 'Objects' && (method === 'toString' || method === 'requireNonNull'))
    return asString(shapeIn(args[0] ?? null, ctx));
  if (owner === 'MessageFormat' && method === 'format') {
    const [fmt, ...rest] = shapes();
    if (!fmt) return dynamic();
    return {
      ...join([fmt, ...rest]),
      text: fmt.text.replace(/\{(\d+)[^}]*\}/g, (s, i: string) => rest[Number(i)]?.text ?? s),
    };
  }
  if (/^(List|Set|Stream|Arrays|Collections)$/.test(owner)) {
    if (/^(of|asList|singletonList|singleton)$/.test(method)) return vector(shapes());
    if (/^(copyOf|unmodifiable\w*)$/.test(method)) return shapeIn(args[0] ?? null, ctx);
    // The count only repeats the element: `String.join(",", Collections.nCopies(ids.size(), "?"))`.
    if (method === 'nCopies') return vector([shapeIn(args[1] ?? null, ctx)]);
  }
  if (NUMERIC_METHODS.test(method)) return NUMERIC;
  if (!object || object.kind() === 'this') {
    const local = methodNamed(method, node, ctx.tree);
    if (local) return returnedShape(local, ctx);
  }
  if (!object) return dynamic();
  if (MUTATORS.has(method)) {
    const root = chainRoot(node);
    // A chain on a local builder is part of what the builder holds: read the builder.
    if (root?.kind() === 'identifier') return shapeIn(root, ctx);
    const base = shapeIn(object, ctx);
    const added = mutationShape(node, ctx);
    return base.elements
      ? vector([...base.elements, ...(added.elements ?? [added])], base.separator)
      : join([base, asString(added)]);
  }
  if (TRANSPARENT_METHODS.test(method)) return asString(shapeIn(object, ctx));
  if (method === 'formatted') return format(asString(shapeIn(object, ctx)), shapes());
  if (method === 'concat') return join([asString(shapeIn(object, ctx)), ...shapes().map(asString)]);
  return dynamic();
}

const METHOD_RULE = { rule: { kind: 'method_declaration' } };
const RETURN_RULE = { rule: { kind: 'return_statement' } };

/** The one method the file declares under `name`, or null (none, or overloads). */
function methodNamed(name: string, from: SgNode, tree: TreeIndex): SgNode | null {
  if (!tree.methods) {
    const methods = new Map<string, SgNode[]>();
    for (const m of from.getRoot().root().findAll(METHOD_RULE)) {
      resolutionWork.visits++;
      const declared = m.field('name')?.text();
      if (!declared) continue;
      const list = methods.get(declared);
      if (list) list.push(m);
      else methods.set(declared, [m]);
    }
    tree.methods = methods;
  }
  const found = tree.methods.get(name);
  return found?.length === 1 ? (found[0] as SgNode) : null;
}

/**
 * A call of a method this file declares (`buildCommand()`, `this.script()`): what its `return`
 * statements give, constant when every one is, whatever the arguments (a parameter is dynamic
 * there). The method's own parameters are not the caller's: they are not recorded for
 * `callersReaching`. Followed at any depth; a recursive call adds nothing.
 */
function returnedShape(method: SgNode, ctx: Context): Shape {
  return guarded(`returns:${method.id()}`, ctx, () => {
    let returns = ctx.tree.returns.get(method.id());
    if (!returns) {
      returns = method.findAll(RETURN_RULE).filter((r) => nearestScope(r)?.id() === method.id());
      resolutionWork.visits += returns.length;
      ctx.tree.returns.set(method.id(), returns);
    }
    const inner: Context = { ...ctx, parameters: [] };
    const shapes = returns.map((r) => shapeIn(r.namedChildren()[0] ?? null, inner));
    const first = shapes[0];
    if (!first) return dynamic();
    return { constant: shapes.every((x) => x.constant), text: asString(first).text };
  });
}

/** `String.join(sep, a, b)` or `String.join(sep, list)`. */
function joinWith([separator, ...rest]: Shape[]): Shape {
  if (!separator) return dynamic();
  const only = rest.length === 1 ? rest[0] : undefined;
  const parts = only?.elements ?? (only ? null : rest);
  if (!parts) return only?.constant ? { constant: true, text: only.text } : dynamic();
  return {
    constant: separator.constant && parts.every((p) => p.constant),
    text: parts.map((p) => p.text).join(separator.text),
  };
}

function creation(node: SgNode, ctx: Context): Shape {
  const type = typeName(node.field('type'));
  const args = argumentsOf(node);
  const first = args[0];
  if (STRING_BUILDERS.test(type) || type === 'String') {
    // `new StringBuilder(256)` sets a capacity, not a text.
    if (!first || NUMBER_LITERALS.has(kindOf(first))) return constant('');
    return asString(shapeIn(first, ctx));
  }
  if (type === 'StringJoiner') {
    const [separator, ...affixes] = args.map((a) => shapeIn(a, ctx));
    if (!separator || affixes.some((a) => !a.constant)) return dynamic();
    return { ...vector([], separator.text), constant: separator.constant };
  }
  if (LISTS.test(type)) {
    if (!first || NUMBER_LITERALS.has(kindOf(first))) return vector([]);
    const copied = shapeIn(first, ctx);
    return copied.elements ? vector(copied.elements) : dynamic();
  }
  return dynamic();
}

function shapeIn(node: SgNode | null, ctx: Context): Shape {
  if (!node) return dynamic();
  if (ctx.depth > MAX_DEPTH) {
    ctx.cutoffs.count++;
    return dynamic();
  }
  ctx.depth++;
  const before = ctx.sources.length;
  try {
    const shape = shapeOfNode(node, ctx);
    // Not constant, and nothing inside it was: this is where the data comes in.
    if (!shape.constant && ctx.sources.length === before && SOURCE_KINDS.has(kindOf(node)))
      ctx.sources.push(node);
    return shape;
  } finally {
    ctx.depth--;
  }
}

function shapeOfNode(node: SgNode, ctx: Context): Shape {
  const kind = kindOf(node);
  if (NUMBER_LITERALS.has(kind)) return constant(node.text());
  switch (kind) {
    case 'string_literal':
      return stringLiteral(node, ctx);
    case 'character_literal':
      return constant(unescapeJava(node.text().slice(1, -1)));
    case 'true':
    case 'false':
    case 'class_literal':
      return constant(node.text());
    case 'null_literal':
      return constant('null');
    case 'parenthesized_expression':
      return shapeIn(node.namedChildren()[0] ?? null, ctx);
    case 'cast_expression':
      return shapeIn(node.field('value'), ctx);
    case 'binary_expression': {
      // Every operator but + yields a number or a boolean.
      if (node.field('operator')?.text() !== '+') return NUMERIC;
      return join([asString(shapeIn(node.field('left'), ctx)), asString(shapeIn(node.field('right'), ctx))]);
    }
    case 'unary_expression':
    case 'update_expression':
    case 'instanceof_expression':
      return NUMERIC;
    case 'ternary_expression': {
      const yes = shapeIn(node.field('consequence'), ctx);
      const no = shapeIn(node.field('alternative'), ctx);
      // The text of a dynamic branch, so a rule sees where data enters.
      return { constant: yes.constant && no.constant, text: (yes.constant && !no.constant ? no : yes).text };
    }
    case 'template_expression':
      return shapeIn(
        node.field('template_argument') ??
          node.namedChildren().find((c) => c.kind() === 'string_literal') ??
          null,
        ctx,
      );
    case 'identifier':
      return resolveName(node, ctx);
    case 'field_access':
      return fieldAccess(node, ctx);
    case 'method_invocation':
      return invocation(node, ctx);
    case 'object_creation_expression':
      return creation(node, ctx);
    case 'array_creation_expression': {
      const value = node.field('value');
      return value ? shapeIn(value, ctx) : vector([]);
    }
    case 'array_initializer':
      return vector(node.namedChildren().map((c) => shapeIn(c, ctx)));
    case 'argument_list': {
      // The arguments of `new ProcessBuilder(...)`/`exec(...)`: one vector argument is the vector itself.
      const args = node.namedChildren().map((c) => shapeIn(c, ctx));
      const only = args.length === 1 ? args[0] : undefined;
      return only?.elements ? vector(only.elements) : vector(args);
    }
    default:
      return dynamic();
  }
}

/**
 * The value's shape and the parameters of its scopes it depends on, each once: with
 * `void run(String cmd) { Runtime.getRuntime().exec("sh -c " + cmd); }` the command is not
 * constant because of `cmd`, so what callers pass as `cmd` reaches it.
 */
export function shapeWithParameters(
  node: SgNode,
  parse?: object,
): { shape: ValueShape; parameters: ParameterRef[] } {
  const tree = indexFor(parse);
  const ctx: Context = {
    depth: 0,
    visiting: new Set(),
    sink: node,
    tree,
    cutoffs: { count: 0 },
    parameters: [],
    sources: [],
  };
  const shape = shapeIn(node, ctx);
  return {
    shape: { constant: shape.constant, text: shape.text },
    parameters: uniqueParameters(ctx.parameters),
  };
}

function uniqueParameters(parameters: readonly ParameterRef[]): ParameterRef[] {
  const seen = new Set<string>();
  return parameters.filter((p) => {
    const key = `${p.fn.id()}:${p.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The parameters `scope` declares, in order, with whether the last is variadic (`String... args`). */
export function declaredParameters(scope: SgNode): { names: string[]; variadic: boolean } {
  const params = parametersOf(scope);
  const declared = scope.field('parameters')?.namedChildren() ?? [];
  const last = declared[declared.length - 1];
  return { names: params.map(([n]) => n.text()), variadic: last?.kind() === 'spread_parameter' };
}

/**
 * Where the non-constant parts of `node`'s value come in: the innermost expressions found not
 * constant (a request read, a call's result, a parameter), in the sink's scope and the names it
 * reads (FlowLanguage.sourcesOf). A change that edits one of their lines changed what reaches
 * the sink, though the sink's own line is untouched.
 */
function sourcesOf(node: SgNode, parse?: object): SgNode[] {
  const ctx: Context = {
    depth: 0,
    visiting: new Set(),
    sink: node,
    tree: indexFor(parse),
    cutoffs: { count: 0 },
    parameters: [],
    sources: [],
  };
  shapeIn(node, ctx);
  const seen = new Set<number>();
  return ctx.sources.filter((s) => !seen.has(s.id()) && seen.add(s.id()));
}

export const javaFlow: FlowLanguage = {
  sourcesOf,
  shapeOf(node: SgNode, parse?: object): ValueShape {
    return shapeWithParameters(node, parse).shape;
  },
  callersReaching: (value: SgNode, parse?: object) => callersReaching(value, parse),
  prepare: (root: SgNode, parse: object, yieldNow: () => boolean) =>
    prepareIndex(root, indexFor(parse), yieldNow),
};
