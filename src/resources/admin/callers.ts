/** Who may call the admin routes (/api/admin/…): groups A and B, like POST /inscription, which creates users. */
export const ADMIN_CALLERS = ["A", "B"] as const;
