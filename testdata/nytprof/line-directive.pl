# String evals compiled as Test::Builder's cmp_ok compiles them: a `#line N "file"` directive
# makes their statements count in a file of that name (a plain file to the profiler, not an
# eval). And a named sub defined by a string eval at one place, with a line range that depends
# on the run (`perl -d:NYTProf line-directive.pl 1`, then `... 2`), defined before the `#line`
# evals in the first run and after them in the second: in the second run that eval has the fid
# that the `#line` file has in the first, and nytprofmerge writes the sub's other definition
# with that fid, so the merged file defines the sub in the `#line` file too.
my $run = shift // 1;
my $t = 0;

sub cmp_ok_like {
    my ($got, $expect) = @_;
    my $test;
    my $ok = eval qq[
#line 20 "(eval in cmp_ok) line-directive.pl"
\$test = (\$got == \$expect);
1;
];
    die $@ unless $ok;
    return $test;
}

sub define {
    my $pad = "\n" x shift;
    eval "${pad}sub Gen::new {\n my \$x = shift;\n return \$x + 1;\n}\n1" or die $@;
    $t += Gen::new($_) for 1 .. 3;
}

define($run) if $run == 1;
$t += cmp_ok_like($_, $_) for 1 .. 3;
define($run) if $run != 1;
print "$t\n";
