/**
 * A stub of the few Bukkit types the Paper example uses, with their real names and signatures (return
 * types the example ignores are left out), so that the example compiles and runs in the tests.
 */
package org.bukkit;
