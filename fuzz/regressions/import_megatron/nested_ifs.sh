if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
if [ a ]; then
torchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size $GBS
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
