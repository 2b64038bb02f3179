// How much work one GraphQL operation may ask for. Every root field (and every field that takes
// arguments, such as `WebhookEndpoint.deliveries`) runs its own resolver and database reads, and
// aliases let one document repeat them: `{ a1: agents {…} a2: agents {…} … }` in a 1 MiB body
// asked for ~20,000 listings and held the process (and /healthz) for minutes. An operation may
// run at most MAX_RESOLVED_FIELDS of them, counted with fragments expanded where they are spread;
// more is a 400 `invalid_request` before anything runs.
// Aliases of a field without arguments multiply the answer instead (`{ agent(id: …) { p1: prompt
// p2: prompt … } }`: 5,500 copies of a 100,000-character prompt, a string too long to write, a 500
// after seconds of work), and GraphQL's own validation compares selections pairwise: a document
// holds at most MAX_DOCUMENT_FIELDS field selections (refused as it is parsed), and an answer of
// more than MAX_ANSWER_CHARS is refused instead of written (both 400 `invalid_request`).
import type { Plugin } from 'graphql-yoga';
import {
  GraphQLError,
  Kind,
  type DocumentNode,
  getNamedType,
  isObjectType,
  isInterfaceType,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

export const MAX_RESOLVED_FIELDS = 50;
/** Field selections per document, each alias counted (GraphiQL's introspection query has 220, fragments expanded). */
export const MAX_DOCUMENT_FIELDS = 1000;
/** An answer's size at most, counted in the characters of its strings and names. */
export const MAX_ANSWER_CHARS = 16 * 1024 * 1024;

const tooLarge = (message: string) => new GraphQLError(message, { extensions: { code: 'invalid_request', http: { status: 400 } } });

/** The limits as a Yoga plugin (yoga.ts): the document's size, the operation's reads, the answer's size. */
export const operationLimits: Plugin = {
  onParse() {
    return ({ result, replaceParseResult }) => {
      if (result && !(result instanceof Error) && documentFields(result as DocumentNode) > MAX_DOCUMENT_FIELDS)
        replaceParseResult(tooLarge(`the document has more than ${MAX_DOCUMENT_FIELDS} field selections (aliases count); send several requests`));
    };
  },
  onValidate: ({ addValidationRule }) => addValidationRule(OperationSizeRule),
  onExecute() {
    return {
      onExecuteDone({ result, setResult }) {
        if (Symbol.asyncIterator in result || !result.data || !exceeds(result.data, MAX_ANSWER_CHARS)) return;
        setResult({
          data: null,
          errors: [tooLarge(`the answer would be larger than ${MAX_ANSWER_CHARS / 1024 / 1024} MiB; select fewer fields or smaller pages`)],
        });
      },
    };
  },
};

/** Field nodes in a document as written (fragments once each). */
function documentFields(doc: DocumentNode): number {
  let n = 0;
  const walk = (set: SelectionSetNode | undefined): void => {
    if (!set || n > MAX_DOCUMENT_FIELDS) return;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) n++;
      if (sel.kind !== Kind.FRAGMENT_SPREAD) walk(sel.selectionSet);
    }
  };
  for (const def of doc.definitions) if (def.kind === Kind.OPERATION_DEFINITION || def.kind === Kind.FRAGMENT_DEFINITION) walk(def.selectionSet);
  return n;
}

/** Whether a result's strings and names add up to more than `max` characters (stops counting there). */
function exceeds(value: unknown, max: number): boolean {
  let size = 0;
  const add = (v: unknown): boolean => {
    if (typeof v === 'string') size += v.length + 2;
    else if (Array.isArray(v)) {
      for (const item of v) if (add(item)) return true;
    } else if (v && typeof v === 'object') {
      for (const key in v) {
        size += key.length + 4;
        if (add((v as Record<string, unknown>)[key])) return true;
      }
    } else size += 8;
    return size > max;
  };
  return add(value);
}

/** Root fields plus fields with arguments an operation selects, fragments expanded. */
export function resolvedFieldCount(
  schema: GraphQLSchema,
  fragments: Map<string, FragmentDefinitionNode>,
  root: GraphQLCompositeType,
  set: SelectionSetNode,
): number {
  const memo = new Map<string, number>();
  const visiting = new Set<string>();
  const count = (parent: GraphQLCompositeType | undefined, selections: SelectionSetNode, isRoot: boolean): number => {
    let n = 0;
    for (const sel of selections.selections) {
      if (sel.kind === Kind.FIELD) {
        const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[sel.name.value] : undefined;
        if (isRoot || (def && def.args.length > 0)) n++;
        if (sel.selectionSet && def) n += count(getNamedType(def.type) as GraphQLCompositeType, sel.selectionSet, false);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const type = sel.typeCondition ? (schema.getType(sel.typeCondition.name.value) as GraphQLCompositeType | undefined) : parent;
        n += count(type, sel.selectionSet, isRoot);
      } else {
        const name = sel.name.value;
        const frag = fragments.get(name);
        if (!frag || visiting.has(name)) continue; // unknown or cyclic: other rules report it
        const key = `${name}:${isRoot}`;
        let c = memo.get(key);
        if (c === undefined) {
          visiting.add(name);
          c = count(schema.getType(frag.typeCondition.name.value) as GraphQLCompositeType | undefined, frag.selectionSet, isRoot);
          visiting.delete(name);
          memo.set(key, c);
        }
        n += c;
      }
      if (n > MAX_RESOLVED_FIELDS * 1000) return n; // far over: stop counting
    }
    return n;
  };
  return count(root, set, true);
}

/** The validation rule Yoga adds (see yoga.ts), so /graphql and /graphql/stream both apply it. */
export function OperationSizeRule(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  const fragments = new Map(context.getDocument().definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  return {
    OperationDefinition(op) {
      const root = schema.getRootType(op.operation);
      if (!root) return;
      const n = resolvedFieldCount(schema, fragments, root, op.selectionSet);
      if (n > MAX_RESOLVED_FIELDS) {
        context.reportError(
          new GraphQLError(
            `the operation asks for ${n > MAX_RESOLVED_FIELDS * 1000 ? 'far more than' : n} root fields and fields with arguments; at most ${MAX_RESOLVED_FIELDS} per operation (send several requests)`,
            { nodes: op, extensions: { code: 'invalid_request', http: { status: 400 } } },
          ),
        );
      }
    },
  };
}
