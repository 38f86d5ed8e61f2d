/**
 * The public API, read from the sources with the TypeScript compiler: every declaration each entry point of the
 * package exports. Used by `npm run api` (writes api/steerlog.api.md, the API report checked by
 * test/package/api-report.test.ts) and by the TSDoc check (every exported declaration has a doc comment).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The package's entry points: subpath → source file (from package.json's exports, dist → source). */
export const entryPoints = (): Record<string, string> => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | { import: string }> };
  const out: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    out[subpath === '.' ? 'steerlog' : `steerlog/${subpath.slice(2)}`] = target.import.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts');
  }
  return out;
};

/** One exported declaration. */
export interface ExportedDeclaration {
  readonly entry: string;
  readonly name: string;
  readonly kind: string;
  readonly file: string;
  readonly documented: boolean;
  /** The declaration's signature as the compiler prints it (no bodies). */
  readonly signature: string;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** The declaration without implementation: what a .d.ts would say, on one normalized text. */
const signatureOf = (checker: ts.TypeChecker, name: string, decl: ts.Declaration, symbol: ts.Symbol): string => {
  if (ts.isInterfaceDeclaration(decl) || ts.isTypeAliasDeclaration(decl) || ts.isEnumDeclaration(decl)) {
    return printer.printNode(ts.EmitHint.Unspecified, decl, decl.getSourceFile()).replace(/^export\s+/, '');
  }
  if (ts.isClassDeclaration(decl)) {
    const members = decl.members
      .filter((m) => !(ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Private) && !(m.name && ts.isPrivateIdentifier(m.name)))
      .map((m) => {
        const t = checker.getTypeAtLocation(m);
        const label = m.name ? m.name.getText() : ts.isConstructorDeclaration(m) ? 'constructor' : m.kind.toString();
        const mods = ts.getCombinedModifierFlags(m);
        const prefix = `${mods & ts.ModifierFlags.Static ? 'static ' : ''}${mods & ts.ModifierFlags.Readonly ? 'readonly ' : ''}`;
        if (ts.isConstructorDeclaration(m)) return `  constructor(${m.parameters.map((p) => p.getText().replace(/\s+/g, ' ')).join(', ')});`;
        return `  ${prefix}${label}: ${checker.typeToString(t, m, ts.TypeFormatFlags.NoTruncation)};`;
      });
    const heritage = decl.heritageClauses?.map((h) => ' ' + h.getText()).join('') ?? '';
    return `class ${name}${heritage} {\n${members.join('\n')}\n}`;
  }
  const type = checker.getTypeOfSymbolAtLocation(symbol, decl);
  const keyword = ts.isFunctionDeclaration(decl) ? 'function' : 'const';
  return `${keyword} ${name}: ${checker.typeToString(type, decl, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseFullyQualifiedType)}`;
};

const hasDoc = (decl: ts.Declaration): boolean => {
  const node = ts.isVariableDeclaration(decl) ? decl.parent.parent : decl;
  return ts.getJSDocCommentsAndTags(node).length > 0 || /\/\*\*[\s\S]*?\*\/\s*$/.test(node.getSourceFile().text.slice(0, node.getStart()).slice(-4000));
};

/** Every exported declaration of every entry point. */
export const publicDeclarations = (): ExportedDeclaration[] => {
  const entries = entryPoints();
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const program = ts.createProgram({ rootNames: Object.values(entries).map((f) => join(ROOT, f)), options: config.options });
  const checker = program.getTypeChecker();
  const out: ExportedDeclaration[] = [];
  for (const [entry, file] of Object.entries(entries)) {
    const source = program.getSourceFile(join(ROOT, file))!;
    const moduleSymbol = checker.getSymbolAtLocation(source)!;
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      for (const decl of symbol.declarations ?? []) {
        out.push({
          entry,
          name: exported.name,
          kind: ts.SyntaxKind[decl.kind],
          file: relative(ROOT, decl.getSourceFile().fileName),
          documented: hasDoc(decl),
          signature: signatureOf(checker, exported.name, decl, symbol),
        });
      }
    }
  }
  return out.sort((a, b) => (a.entry === b.entry ? a.name.localeCompare(b.name) : a.entry.localeCompare(b.entry)));
};
