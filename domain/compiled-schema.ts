import { z } from 'zod';

/**
 * Compiles zod schemas (the subset the event catalogue uses) into plain JavaScript predicates, as source text:
 * `scripts/gen-event-validators.ts` writes them to `domain/event-validators.generated.ts`, and
 * test/domain/event-validators.test.ts checks that the file is what this compiler makes of today's schemas.
 *
 * A compiled predicate takes lossless JSON as JSON.parse or a snapshot makes it (plain objects and arrays without
 * symbol keys or cycles: these are not looked for) and answers `true` only for a value without -0 or non-finite
 * numbers (which JSON.parse can still make) that the schema accepts, which it leaves deep-frozen (each object and
 * array is frozen once its contents passed: a value it refuses may be left partly frozen, as its owner may have it)
 * AND returns unchanged (its output deep-equal to its input): every leaf checked as zod checks it, each custom refinement of the schema
 * (`refine`, `superRefine`) run as it is — by reference, from the array that {@link schemaRefinements} collects from
 * the same schemas in the same order. Anything else answers `false`: an invalid value, and also a valid one whose
 * output would differ (an unknown key that a stripping object drops, a key present with `undefined`) or a schema part
 * the compiler does not take (transforms, defaults, lazy schemas, string formats, …). A caller then asks zod, which
 * decides and names the failing path. So a predicate never changes what is accepted or how a refusal reads; it only
 * skips zod's cost where it can.
 */

/** A custom refinement as zod stores it (`ZodEffects` of type `refinement`). */
export type Refinement = (value: unknown, ctx: z.RefinementCtx) => unknown;

type Def = { typeName?: string } & Record<string, unknown>;
const defOf = (s: z.ZodTypeAny): Def => s._def as Def;

/**
 * The refinements of `roots`, in the order the compiler meets them (depth first, each schema object once): the
 * array a compiled module is called with.
 */
export const schemaRefinements = (roots: readonly z.ZodTypeAny[]): Refinement[] => {
  const out: Refinement[] = [];
  const seen = new Set<z.ZodTypeAny>();
  const walk = (s: z.ZodTypeAny): void => {
    if (seen.has(s)) return;
    seen.add(s);
    for (const child of childrenOf(s)) walk(child);
    const d = defOf(s);
    if (d.typeName === 'ZodEffects' && (d['effect'] as { type: string }).type === 'refinement') out.push((d['effect'] as { refinement: Refinement }).refinement);
  };
  for (const r of roots) walk(r);
  return out;
};

/** The sub-schemas the compiler visits, in its order. */
const childrenOf = (s: z.ZodTypeAny): z.ZodTypeAny[] => {
  const d = defOf(s);
  switch (d.typeName) {
    case 'ZodObject': {
      const shape = (s as z.ZodObject<z.ZodRawShape>).shape;
      const catchall = d['catchall'] as z.ZodTypeAny;
      return [...Object.values(shape), ...(defOf(catchall).typeName === 'ZodNever' ? [] : [catchall])];
    }
    case 'ZodArray':
      return [d['type'] as z.ZodTypeAny];
    case 'ZodOptional':
    case 'ZodNullable':
    case 'ZodReadonly':
      return [d['innerType'] as z.ZodTypeAny];
    case 'ZodBranded':
      return [d['type'] as z.ZodTypeAny];
    case 'ZodEffects':
      return (d['effect'] as { type: string }).type === 'refinement' ? [d['schema'] as z.ZodTypeAny] : [];
    case 'ZodUnion':
      return [...(d['options'] as z.ZodTypeAny[])];
    case 'ZodDiscriminatedUnion':
      return [...(d['options'] as z.ZodTypeAny[])];
    case 'ZodRecord':
      return [d['valueType'] as z.ZodTypeAny];
    default:
      return [];
  }
};

/** What the compiler made: one predicate per root (by name), and the functions' source. */
export interface CompiledSchemas {
  /** TypeScript: `const vN = (v: any): boolean => …;` predicates and the `kN` constants they share, in declaration order. */
  readonly functions: readonly string[];
  /** The predicate's name for each root, in the roots' order. */
  readonly roots: readonly string[];
  /** The refinements the functions call, by index (`refined(i, v)`): the same as `schemaRefinements(roots)`. */
  readonly refinements: readonly Refinement[];
}

/**
 * Compiles `roots`. The functions use helpers the generated module defines: `isPlain(v)` (an object, not an array),
 * `keyCount(v)`, `freeze(v)` (freezes, answers true), `isJson(v)` (no -0 or non-finite number inside, for `unknown`;
 * freezes what it checked), `refined(i, v)` (runs refinement `i`
 * and says whether it added no issue), `every(v, f)`, `everyValue(v, f)` and `everyOther(v, known, f)`.
 */
export const compileSchemas = (roots: readonly z.ZodTypeAny[]): CompiledSchemas => {
  const names = new Map<z.ZodTypeAny, string>();
  const functions: string[] = [];
  const refinements: Refinement[] = [];
  let constants = 0;
  /** A constant the functions share (a map or a set), declared once. */
  const constant = (init: string): string => {
    const name = `k${constants++}`;
    functions.push(`const ${name} = ${init};`);
    return name;
  };
  const nameOf = (s: z.ZodTypeAny): string => {
    const known = names.get(s);
    if (known !== undefined) return known;
    const name = `v${names.size}`;
    names.set(s, name);
    const slot = functions.length;
    functions.push('');
    functions[slot] = `const ${name} = (v: any): boolean => ${body(s)};`;
    return name;
  };
  const call = (s: z.ZodTypeAny, v: string): string => `${nameOf(s)}(${v})`;
  const body = (s: z.ZodTypeAny): string => {
    const d = defOf(s);
    switch (d.typeName) {
      case 'ZodString': {
        const parts = ["typeof v === 'string'"];
        for (const c of d['checks'] as { kind: string; value?: number; regex?: RegExp }[]) {
          if (c.kind === 'min') parts.push(`v.length >= ${c.value}`);
          else if (c.kind === 'max') parts.push(`v.length <= ${c.value}`);
          else if (c.kind === 'length') parts.push(`v.length === ${c.value}`);
          else if (c.kind === 'regex' && !c.regex!.global && !c.regex!.sticky) parts.push(`${String(c.regex)}.test(v)`);
          else return 'false';
        }
        return parts.join(' && ');
      }
      case 'ZodNumber': {
        // finite and not -0 besides zod's checks: a predicate answers true only for lossless JSON (what a stored event is)
        const parts = ["typeof v === 'number'", 'Number.isFinite(v)', '!Object.is(v, -0)'];
        for (const c of d['checks'] as { kind: string; value?: number; inclusive?: boolean }[]) {
          if (c.kind === 'int') parts.push('Number.isInteger(v)');
          else if (c.kind === 'min') parts.push(`v ${c.inclusive ? '>=' : '>'} ${c.value}`);
          else if (c.kind === 'max') parts.push(`v ${c.inclusive ? '<=' : '<'} ${c.value}`);
          else if (c.kind === 'finite') continue;
          else return 'false';
        }
        return parts.join(' && ');
      }
      case 'ZodBoolean':
        return "typeof v === 'boolean'";
      case 'ZodNull':
        return 'v === null';
      case 'ZodLiteral': {
        const value = d['value'];
        return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) || value === null ? `v === ${JSON.stringify(value)}` : 'false';
      }
      case 'ZodEnum':
        return `(${(d['values'] as string[]).map((x) => `v === ${JSON.stringify(x)}`).join(' || ')})`;
      case 'ZodUnknown':
      case 'ZodAny':
        return 'isJson(v)';
      case 'ZodOptional':
        return `(v === undefined || ${call(d['innerType'] as z.ZodTypeAny, 'v')})`;
      case 'ZodNullable':
        return `(v === null || ${call(d['innerType'] as z.ZodTypeAny, 'v')})`;
      case 'ZodReadonly':
        return call(d['innerType'] as z.ZodTypeAny, 'v');
      case 'ZodBranded':
        return call(d['type'] as z.ZodTypeAny, 'v');
      case 'ZodEffects': {
        const effect = d['effect'] as { type: string };
        if (effect.type !== 'refinement') return 'false';
        const inner = call(d['schema'] as z.ZodTypeAny, 'v');
        // the index is this refinement's place in schemaRefinements' order: children first, then the effect
        refinements.push((effect as unknown as { refinement: Refinement }).refinement);
        return `${inner} && refined(${refinements.length - 1}, v)`;
      }
      case 'ZodArray': {
        const parts = ['Array.isArray(v)'];
        const min = d['minLength'] as { value: number } | null;
        const max = d['maxLength'] as { value: number } | null;
        const exact = d['exactLength'] as { value: number } | null;
        if (min) parts.push(`v.length >= ${min.value}`);
        if (max) parts.push(`v.length <= ${max.value}`);
        if (exact) parts.push(`v.length === ${exact.value}`);
        parts.push(`every(v, ${nameOf(d['type'] as z.ZodTypeAny)})`, 'freeze(v)');
        return parts.join(' && ');
      }
      case 'ZodUnion':
        return `(${(d['options'] as z.ZodTypeAny[]).map((o) => call(o, 'v')).join(' || ')})`;
      case 'ZodDiscriminatedUnion': {
        const key = d['discriminator'] as string;
        const options = d['options'] as z.ZodTypeAny[];
        const map = d['optionsMap'] as Map<unknown, z.ZodTypeAny>;
        const optionNames = options.map((o) => nameOf(o));
        const cases = [...map.entries()].map(([value, o]) => {
          if (!(typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null)) return null;
          return `[${JSON.stringify(value)}, ${optionNames[options.indexOf(o)]}]`;
        });
        if (cases.some((c) => c === null)) return 'false';
        const byValue = constant(`new Map<unknown, (v: any) => boolean>([${cases.join(', ')}])`);
        return `isPlain(v) && (${byValue}.get(v[${JSON.stringify(key)}])?.(v) ?? false)`;
      }
      case 'ZodRecord': {
        const keyDef = defOf(d['keyType'] as z.ZodTypeAny);
        const value = nameOf(d['valueType'] as z.ZodTypeAny);
        if (keyDef.typeName !== 'ZodString' || (keyDef['checks'] as unknown[]).length > 0) return 'false';
        return `isPlain(v) && everyValue(v, ${value}) && freeze(v)`;
      }
      case 'ZodObject': {
        const shape = (s as z.ZodObject<z.ZodRawShape>).shape;
        const catchall = d['catchall'] as z.ZodTypeAny;
        const unknownKeys = d['unknownKeys'] as 'strict' | 'strip' | 'passthrough';
        const lines = ['{', '  if (!isPlain(v)) return false;', '  let n = 0;', '  let x: any;'];
        for (const [key, field] of Object.entries(shape)) {
          const k = JSON.stringify(key);
          const optional = field.isOptional();
          lines.push(`  x = v[${k}];`);
          // a key present with undefined: zod's output may differ from the input (let zod decide); an inherited one too
          // JSON has no inherited data, but Object.prototype's own names (constructor, toString, …) read through
          const own = key in Object.prototype ? `Object.hasOwn(v, ${k}) && ` : '';
          if (optional) lines.push(`  if (x !== undefined) { if (!(${own}${call(field, 'x')})) return false; n++; } else if (${k} in v) return false;`);
          else lines.push(`  if (x === undefined || !(${own}${call(field, 'x')})) return false;`, '  n++;');
        }
        const known = () => constant(`new Set(${JSON.stringify(Object.keys(shape))})`);
        if (defOf(catchall).typeName !== 'ZodNever') lines.push(`  return (n === keyCount(v) || everyOther(v, ${known()}, ${nameOf(catchall)})) && freeze(v);`);
        else if (unknownKeys === 'passthrough') lines.push(`  return (n === keyCount(v) || everyOther(v, ${known()}, isJson)) && freeze(v);`);
        else lines.push('  return n === keyCount(v) && freeze(v);'); // strict refuses other keys; strip drops them (output ≠ input): zod decides
        lines.push('}');
        return lines.join('\n'); // a block: the arrow function's body
      }
      default:
        return 'false';
    }
  };
  const rootNames = roots.map((r) => nameOf(r));
  return { functions, roots: rootNames, refinements };
};
