import { errorText, h, message } from "./dom.js";

/**
 * A modal <dialog>: the browser keeps focus inside it, Escape closes it, and
 * focus returns to what opened it. Resolves to the button chosen ("" when
 * dismissed). `content` may hold form fields; `onConfirm` keeps the dialog
 * open by returning false, or by throwing: its error is then shown in the
 * dialog, above the buttons, for another try. Leaving the page (the browser's
 * Back) dismisses it.
 */
export function openDialog(options: {
  title: string;
  content: Node[];
  confirm?: string;
  danger?: boolean;
  cancel?: string;
  onConfirm?: () => Promise<boolean> | boolean;
}): Promise<boolean> {
  const opener = document.activeElement as HTMLElement | null;
  const titleId = `dlg-${Date.now()}`;
  const buttons = h("div", { class: "actions" });
  const problem = h("div");
  const form = h("form", { method: "dialog" }, h("h2", { id: titleId }, options.title), ...options.content, problem, buttons);
  const dialog = h("dialog", { "aria-labelledby": titleId }, form);
  return new Promise((resolve) => {
    let confirmed = false;
    if (options.cancel !== "") buttons.append(h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, options.cancel ?? "Cancel"));
    if (options.confirm) {
      const ok = h("button", { type: "submit", class: options.danger ? "danger" : "primary" }, options.confirm);
      buttons.append(ok);
    }
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
      if (button) button.disabled = true;
      problem.replaceChildren();
      try {
        if (options.onConfirm && !(await options.onConfirm())) return;
        confirmed = true;
        dialog.close();
      } catch (error) {
        problem.replaceChildren(message("error", errorText(error)));
      } finally {
        if (button) button.disabled = false;
      }
    });
    // The browser's Back (or any other move to another page) closes the dialog with the page that opened it.
    const leave = () => dialog.close();
    window.addEventListener("hashchange", leave);
    dialog.addEventListener("close", () => {
      window.removeEventListener("hashchange", leave);
      dialog.remove();
      opener?.focus();
      resolve(confirmed);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** A secret shown once, selectable, with a copy button (the clipboard API where the page is a secure context). */
export function secretBox(label: string, secret: string, copyLabel = "Copy key"): HTMLElement {
  const input = h("input", { id: `secret-${Date.now()}`, class: "secret", readonly: true, value: secret, spellcheck: "false", autocomplete: "off" });
  const copied = h("span", { class: "copied", role: "status" });
  const copy = h(
    "button",
    {
      type: "button",
      class: "primary",
      onclick: () => {
        input.select();
        // Plain HTTP from another host is not a secure context (no clipboard API): the selected text is copied the old way.
        const copyIt = navigator.clipboard ? navigator.clipboard.writeText(secret) : Promise.reject(new Error("no clipboard"));
        void copyIt.catch(() => document.execCommand("copy")).then(() => (copied.textContent = "Copied."));
      },
    },
    copyLabel,
  );
  return h("div", { class: "field" }, h("label", { for: input.id }, label), h("div", { class: "row" }, input, copy), copied);
}
