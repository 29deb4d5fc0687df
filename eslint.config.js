import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "clients/typescript/dist/", "clients/*/build/", "src/generated/", "node_modules/", "data/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Express 5 forwards rejected promises from handlers: passing async functions is the point.
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      // A variable a closure reads before its one assignment (main.ts's server) cannot be const.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      // Line breaks are the formatter's (biome.json), which breaks `request(url)[method](…)` before the `[`:
      // off, as eslint-config-prettier turns it off for Prettier.
      "no-unexpected-multiline": "off",
    },
  },
  {
    // supertest types every response body as `any`: tests read it on purpose.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
    },
  },
  {
    files: ["scripts/**/*.mjs", "bench/**/*.mjs", "clients/**/*.mjs", "eslint.config.js"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        URL: "readonly",
        Buffer: "readonly",
        fetch: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
      },
    },
  },
);
