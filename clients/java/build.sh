#!/usr/bin/env bash
# Builds the Java client with the JDK alone (javac, jar): no build tool, no download.
#   ./build.sh          the jar: build/game-community-api-client.jar
#   ./build.sh --tests  the jar, then the tests (and the README's Paper example) in build/test-classes
# GSON_JAR and JUNIT_JARS (a folder) point at other copies than Debian's (libgoogle-gson-java, junit5).
set -euo pipefail
cd "$(dirname "$0")"

GSON_JAR="${GSON_JAR:-/usr/share/java/gson.jar}"
JUNIT_JARS="${JUNIT_JARS:-/usr/share/java}"
for f in "$GSON_JAR"; do [ -f "$f" ] || { echo "missing $f (apt-get install libgoogle-gson-java, or set GSON_JAR to a Gson jar)" >&2; exit 1; }; done

rm -rf build
mkdir -p build/classes
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d build/classes -cp "$GSON_JAR" $(find src/main/java -name '*.java')
printf 'Automatic-Module-Name: net.gamecommunity.api\n' > build/MANIFEST.MF
jar --create --file build/game-community-api-client.jar --manifest build/MANIFEST.MF -C build/classes .

if [ "${1:-}" = "--tests" ]; then
  [ -f "$JUNIT_JARS/junit-jupiter-api.jar" ] || { echo "missing $JUNIT_JARS/junit-jupiter-api.jar (apt-get install junit5)" >&2; exit 1; }
  mkdir -p build/test-classes
  javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d build/test-classes \
    -cp "build/game-community-api-client.jar:$GSON_JAR:$JUNIT_JARS/junit-jupiter-api.jar:$JUNIT_JARS/junit-jupiter-params.jar:$JUNIT_JARS/opentest4j.jar:$JUNIT_JARS/apiguardian-api.jar:$JUNIT_JARS/junit-platform-commons.jar" \
    $(find src/test/java -name '*.java')
fi
