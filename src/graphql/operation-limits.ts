// How much work one GraphQL operation may ask for. Every root field (and every field that takes
// arguments, such as `WebhookEndpoint.deliveries`) runs its own resolver and database reads, and
// aliases let one document repeat them: `{ a1: agents {…} a2: agents {…} … }` in a 1 MiB body
// asked for ~20,000 listings and held the process (and /healthz) for minutes. An operation may
// run at most MAX_RESOLVED_FIELDS of them, counted with fragments expanded where they are spread;
// more is a 400 `invalid_request` before anything runs.
import {
  GraphQLError,
  Kind,
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
