# Collapsible string evals for profcodec-nytprof's hostile tests and fuzz seeds.
my @subs = map { eval 'sub { $_[0] + 1 }' } 1 .. 3;
my $t = 0;
$t += $_->(1) for @subs;
$t += eval '$t * 2' for 1 .. 3;
print "$t\n";
