#!/usr/bin/env bash
# Builds the Java client with the JDK alone (javac, jar, javadoc): no build tool, no download.
#   ./build.sh          the jar, its sources and javadoc jars, and build/repository: a Maven repository
#                       holding them with pom.xml (net/gamecommunity/community-api-client/<version>/),
#                       which Maven and Gradle can use as a repository (README, "Add it")
#   ./build.sh --tests  the same, then the tests (and the README's Paper example) in build/test-classes
# GSON_JAR and JUNIT_JARS (a folder) point at other copies than Debian's (libgoogle-gson-java, junit5).
set -euo pipefail
cd "$(dirname "$0")"

GSON_JAR="${GSON_JAR:-/usr/share/java/gson.jar}"
JUNIT_JARS="${JUNIT_JARS:-/usr/share/java}"
for f in "$GSON_JAR"; do [ -f "$f" ] || { echo "missing $f (apt-get install libgoogle-gson-java, or set GSON_JAR to a Gson jar)" >&2; exit 1; }; done

# The coordinates are pom.xml's (the first groupId, artifactId and version: the project's own).
pom_value() { sed -n "s:^  <$1>\(.*\)</$1>\$:\1:p" pom.xml | head -1; }
GROUP="$(pom_value groupId)"
ARTIFACT="$(pom_value artifactId)"
VERSION="$(pom_value version)"
[ -n "$GROUP" ] && [ -n "$ARTIFACT" ] && [ -n "$VERSION" ] || { echo "pom.xml: groupId, artifactId or version not found" >&2; exit 1; }
# The client sends its version in User-Agent: it must be the artifact's.
grep -q "static final String VERSION = \"$VERSION\";" src/main/java/net/gamecommunity/api/HttpCommunityApi.java \
  || { echo "HttpCommunityApi.VERSION is not pom.xml's version $VERSION: change both" >&2; exit 1; }

NAME="$ARTIFACT-$VERSION"
rm -rf build
mkdir -p build/classes build/javadoc
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d build/classes -cp "$GSON_JAR" $(find src/main/java -name '*.java')
printf 'Automatic-Module-Name: net.gamecommunity.api\nImplementation-Title: %s\nImplementation-Version: %s\n' "$ARTIFACT" "$VERSION" > build/MANIFEST.MF
jar --create --file "build/$NAME.jar" --manifest build/MANIFEST.MF -C build/classes .
jar --create --file "build/$NAME-sources.jar" -C src/main/java .
# Every public element explained: a warning (a field, a parameter, a return value left undocumented) fails the build.
javadoc -quiet -Xdoclint:all -Werror -encoding UTF-8 -charset UTF-8 --release 17 -d build/javadoc -cp "$GSON_JAR" \
  -sourcepath src/main/java -windowtitle "Game community API client $VERSION" net.gamecommunity.api >/dev/null
jar --create --file "build/$NAME-javadoc.jar" -C build/javadoc .

# A Maven repository (the layout of Maven Central): the artifacts, their pom, checksums and metadata.
REPO="build/repository/${GROUP//.//}/$ARTIFACT"
mkdir -p "$REPO/$VERSION"
cp "build/$NAME.jar" "build/$NAME-sources.jar" "build/$NAME-javadoc.jar" "$REPO/$VERSION/"
cp pom.xml "$REPO/$VERSION/$NAME.pom"
cat > "$REPO/maven-metadata.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>$GROUP</groupId>
  <artifactId>$ARTIFACT</artifactId>
  <versioning>
    <latest>$VERSION</latest>
    <release>$VERSION</release>
    <versions>
      <version>$VERSION</version>
    </versions>
    <lastUpdated>$(date -u +%Y%m%d%H%M%S)</lastUpdated>
  </versioning>
</metadata>
EOF
for f in "$REPO/maven-metadata.xml" "$REPO/$VERSION"/*; do
  sha1sum "$f" | cut -d' ' -f1 | tr -d '\n' > "$f.sha1"
  sha256sum "$f" | cut -d' ' -f1 | tr -d '\n' > "$f.sha256"
  md5sum "$f" | cut -d' ' -f1 | tr -d '\n' > "$f.md5"
done

if [ "${1:-}" = "--tests" ]; then
  [ -f "$JUNIT_JARS/junit-jupiter-api.jar" ] || { echo "missing $JUNIT_JARS/junit-jupiter-api.jar (apt-get install junit5)" >&2; exit 1; }
  mkdir -p build/test-classes
  javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d build/test-classes \
    -cp "build/$NAME.jar:$GSON_JAR:$JUNIT_JARS/junit-jupiter-api.jar:$JUNIT_JARS/junit-jupiter-params.jar:$JUNIT_JARS/opentest4j.jar:$JUNIT_JARS/apiguardian-api.jar:$JUNIT_JARS/junit-platform-commons.jar" \
    $(find src/test/java -name '*.java')
  # The jar the tests run against, whatever its version (test-live.mjs puts it on the class path).
  cp "build/$NAME.jar" build/client.jar
fi
